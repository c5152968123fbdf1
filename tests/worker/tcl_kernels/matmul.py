"""tl.dot kernels for the differential tests (test_tcl_differential.py): run unchanged by the
shim and by the real Triton interpreter. `run(case)` returns {name: tensor}."""

import torch
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, bias_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, ACT: tl.constexpr, FORM: tl.constexpr):
    # The tutorial's matmul: grouped program order, a K loop over carried pointer blocks, an
    # epilogue (bias, activation, cast to the output dtype).
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        if FORM == "acc_arg":
            acc = tl.dot(a, b, acc)
        elif FORM == "augassign":
            acc += tl.dot(a, b, allow_tf32=False)
        else:
            acc = acc + tl.dot(a, b, input_precision="ieee", out_dtype=tl.float32)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    bias = tl.load(bias_ptr + offs_cn, mask=offs_cn < N, other=0.0)
    acc = acc + bias[None, :]
    if ACT == "relu":
        acc = tl.maximum(acc, 0.0)
    c = acc.to(c_ptr.dtype.element_ty)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def int8_dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


def INTERPRETER_WRONG(name):
    """Triton 3.6's interpreter multiplies bf16 blocks in tl.dot wrongly (results ~1e11 off
    PyTorch's); those cases are checked against PyTorch only."""
    return "bfloat16" in name


def matmul(a, b, bias, block=(32, 32, 16), act="", form="acc_arg", out_dtype=None):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), dtype=out_dtype or a.dtype)
    bm, bn, bk = block
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    matmul_kernel[grid](a, b, c, bias, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=4,
                        ACT=act, FORM=form)
    return c


def _float_cases():
    """(name, a, b, bias, form, block) with inputs drawn in one fixed order."""
    g = torch.Generator().manual_seed(3)
    shapes = [(64, 64, 64), (100, 37, 77), (3, 130, 5), (33, 17, 300)]
    blocks = [(32, 32, 16), (16, 64, 32), (64, 16, 8)]
    for i, (M, N, K) in enumerate(shapes):
        for dt in (torch.float32, torch.float16, torch.bfloat16):
            a = torch.randn(M, K, generator=g).to(dt)
            b = torch.randn(K, N, generator=g).to(dt)
            bias = torch.randn(N, generator=g)
            form = ("acc_arg", "augassign", "add")[i % 3]
            yield f"{M}x{N}x{K}_{dt}_{form}", a, b, bias, form, blocks[i % len(blocks)]


def _other_inputs():
    g = torch.Generator().manual_seed(4)
    a = torch.randn(45, 70, generator=g)
    w = torch.randn(50, 70, generator=g)
    ai = torch.randint(-128, 128, (16, 32), generator=g, dtype=torch.int8)
    bi = torch.randint(-128, 128, (32, 64), generator=g, dtype=torch.int8)
    return a, w, ai, bi


def run():
    out = {}
    for name, a, b, bias, form, block in _float_cases():
        out[name] = matmul(a, b, bias, block, "relu", form)
    a, w, ai, bi = _other_inputs()
    # b transposed through its strides, fp16 output of fp32 inputs
    out["transposed_b"] = matmul(a, w.t(), torch.zeros(50), (16, 32, 32), "", "add", torch.float16)
    ci = torch.empty(16, 64, dtype=torch.int32)
    int8_dot_kernel[(1,)](ai, bi, ci, M=16, N=64, K=32)
    out["int8"] = ci
    return out


def expected():
    """The same computations in PyTorch."""
    out = {name: torch.relu(a.double() @ b.double() + bias.double()).to(a.dtype)
           for name, a, b, bias, _, _ in _float_cases()}
    a, w, ai, bi = _other_inputs()
    out["transposed_b"] = (a.double() @ w.double().t()).to(torch.float16)
    out["int8"] = ai.int() @ bi.int()
    return out
