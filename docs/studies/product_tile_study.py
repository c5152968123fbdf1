#!/usr/bin/env python3
"""Which product tiling a GPU wants for the level-2 corpus's fp32 products at `--scale 4`, and
what a launch's strides cost the host as runtime arguments against constexprs.

Part 1 times the synthesizer's product kernel (tf32x3 tl.dot over a K loop, GROUP_M program
order, bias epilogue; every stride a runtime argument, as the candidates pass them) for each
product shape the corpus's level 2 has at `--scale 4`, over a menu of tilings and split-K
forms, against eager's fp32 `F.linear`. Times are CUDA-event medians (triton.testing.do_bench):
the GPU's time, not the host's. Many of those products have fewer 128x128 output tiles than a
large GPU has multiprocessors; this says whether smaller tiles or split-K fill it better.

Part 2 times the host's cost of one launch of the same element-wise kernel with 20 strides more
passed as runtime integers, and as constexprs (medians of 20 runs of 2000 calls).

Usage: product_tile_study.py [--json]   (on a machine with an NVIDIA GPU, Triton and PyTorch)
"""

import json
import sys

import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from launch_cost_study import per_call_us  # the same host timer, beside this file
from triton.testing import do_bench

# (M, N, K) of level 2's products at --scale 4 (rows folded into M), from `crucible synth`'s
# traced graphs; each with the tasks it stands for.
SHAPES = [
    (1024, 2048, 4096, "1 16"),
    (1024, 3072, 3072, "2"),
    (1024, 3072, 4096, "9"),
    (1024, 4096, 4096, "13"),
    (1024, 4096, 3072, "17"),
    (2048, 1024, 4096, "20"),
    (2048, 1024, 1024, "54"),
    (4096, 2048, 2048, "23"),
    (512, 4096, 2048, "42 43 49"),
    (512, 2048, 4096, "44"),
    (512, 2048, 1024, "45"),
    (256, 4096, 2048, "47"),
    (512, 3072, 1536, "48"),
    (512, 2048, 2048, "51"),
    (512, 4096, 1024, "52a"),
    (512, 1024, 4096, "52b"),
]

# (BLOCK_M, BLOCK_N, BLOCK_K, warps, stages, splits)
TILINGS = [
    (128, 128, 32, 8, 3, 1),
    (128, 64, 32, 4, 4, 1),
    (64, 128, 32, 4, 4, 1),
    (64, 64, 32, 4, 3, 1),
    (64, 64, 32, 4, 4, 1),
    (64, 64, 64, 4, 3, 1),
    (32, 64, 32, 4, 4, 1),
    (128, 128, 32, 8, 3, 2),
    (128, 128, 32, 8, 3, 4),
    (64, 128, 32, 4, 4, 2),
    (64, 64, 32, 4, 4, 2),
]


@triton.jit
def _product(
    a,
    b,
    bias,
    out,
    M,
    N,
    K,
    span,
    a_sm,
    a_sk,
    b_sk,
    b_sn,
    o_ss,
    o_sm,
    o_sn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    ADD_BIAS: tl.constexpr,
):
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    width = GROUP_M * grid_n
    first_m = (pid // width) * GROUP_M
    size_m = tl.minimum(grid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % width) % size_m
    pid_n = (pid % width) // size_m
    s = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(s * span, tl.minimum(K, s * span + span), BLOCK_K):
        kk = k0 + rk
        a_tile = tl.load(
            a + rm[:, None] * a_sm + kk[None, :] * a_sk,
            mask=(rm[:, None] < M) & (kk[None, :] < K),
            other=0.0,
        )
        b_tile = tl.load(
            b + kk[:, None] * b_sk + rn[None, :] * b_sn,
            mask=(kk[:, None] < K) & (rn[None, :] < N),
            other=0.0,
        )
        acc += tl.dot(a_tile, b_tile, input_precision="tf32x3")
    if ADD_BIAS:
        acc += tl.load(bias + rn, mask=rn < N, other=0.0)[None, :]
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(out + s * o_ss + rm[:, None] * o_sm + rn[None, :] * o_sn, acc, mask=mask)


@triton.jit
def _sum_parts(parts, bias, out, MN, N, SPLITS: tl.constexpr, BLOCK: tl.constexpr):
    at = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = at < MN
    acc = tl.load(bias + at % N, mask=ok, other=0.0)
    for s in range(SPLITS):
        acc += tl.load(parts + s * MN + at, mask=ok, other=0.0)
    tl.store(out + at, acc, mask=ok)


def product(x, w, bias, tiling):
    bm, bn, bk, warps, stages, splits = tiling
    M, K = x.shape
    N = w.shape[0]
    span = triton.cdiv(triton.cdiv(K, splits), bk) * bk
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn), splits)
    if splits == 1:
        out = torch.empty((M, N), device=x.device)
        _product[grid](
            x,
            w,
            bias,
            out,
            M,
            N,
            K,
            span,
            x.stride(0),
            x.stride(1),
            w.stride(1),
            w.stride(0),
            0,
            out.stride(0),
            out.stride(1),
            BLOCK_M=bm,
            BLOCK_N=bn,
            BLOCK_K=bk,
            GROUP_M=8,
            ADD_BIAS=True,
            num_warps=warps,
            num_stages=stages,
        )
        return out
    parts = torch.empty((splits, M, N), device=x.device)
    _product[grid](
        x,
        w,
        bias,
        parts,
        M,
        N,
        K,
        span,
        x.stride(0),
        x.stride(1),
        w.stride(1),
        w.stride(0),
        parts.stride(0),
        parts.stride(1),
        parts.stride(2),
        BLOCK_M=bm,
        BLOCK_N=bn,
        BLOCK_K=bk,
        GROUP_M=8,
        ADD_BIAS=False,
        num_warps=warps,
        num_stages=stages,
    )
    out = torch.empty((M, N), device=x.device)
    _sum_parts[(triton.cdiv(M * N, 1024),)](parts, bias, out, M * N, N, SPLITS=splits, BLOCK=1024)
    return out


def label(t):
    bm, bn, bk, warps, stages, splits = t
    return f"{bm}x{bn}x{bk}/w{warps}/s{stages}" + (f"/k{splits}" if splits > 1 else "")


def time_shape(M, N, K, tasks, sms):
    x = torch.randn(M, K, device="cuda")
    w = torch.randn(N, K, device="cuda")
    bias = torch.randn(N, device="cuda")
    expected = F.linear(x.double(), w.double(), bias.double())
    row = {
        "shape": [M, N, K],
        "tasks": tasks,
        "eager_ms": do_bench(lambda: F.linear(x, w, bias), return_mode="median"),
    }
    for t in TILINGS:
        got = product(x, w, bias, t)
        err = ((got.double() - expected).abs().max() / expected.pow(2).mean().sqrt()).item()
        ms = do_bench(lambda t=t: product(x, w, bias, t), return_mode="median")
        programs = triton.cdiv(M, t[0]) * triton.cdiv(N, t[1]) * t[5]
        row[label(t)] = {"ms": ms, "programs": programs, "err_over_rms": err}
    best = min((k for k in row if "/" in k), key=lambda k: row[k]["ms"])
    print(
        f"{M}x{N}x{K} ({tasks}): eager {row['eager_ms']:.3f} ms; 128x128 "
        f"{row[label(TILINGS[0])]['ms']:.3f}; best {best} {row[best]['ms']:.3f} "
        f"({row[best]['programs']} programs, {sms} SMs)",
        flush=True,
    )
    return row


def tile_part():
    torch.backends.cuda.matmul.allow_tf32 = False
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    return [time_shape(M, N, K, tasks, sms) for M, N, K, tasks in SHAPES]


@triton.jit
def _copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def _copy_runtime(
    x_ptr,
    out_ptr,
    n,
    s0,
    s1,
    s2,
    s3,
    s4,
    s5,
    s6,
    s7,
    s8,
    s9,
    s10,
    s11,
    s12,
    s13,
    s14,
    s15,
    s16,
    s17,
    s18,
    s19,
    BLOCK: tl.constexpr,
):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def _copy_constexpr(
    x_ptr,
    out_ptr,
    n,
    s0: tl.constexpr,
    s1: tl.constexpr,
    s2: tl.constexpr,
    s3: tl.constexpr,
    s4: tl.constexpr,
    s5: tl.constexpr,
    s6: tl.constexpr,
    s7: tl.constexpr,
    s8: tl.constexpr,
    s9: tl.constexpr,
    s10: tl.constexpr,
    s11: tl.constexpr,
    s12: tl.constexpr,
    s13: tl.constexpr,
    s14: tl.constexpr,
    s15: tl.constexpr,
    s16: tl.constexpr,
    s17: tl.constexpr,
    s18: tl.constexpr,
    s19: tl.constexpr,
    BLOCK: tl.constexpr,
):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def launch_part():
    n = 4096
    x, out = torch.randn(n, device="cuda"), torch.empty(n, device="cuda")
    strides = [4096 * (i + 3) for i in range(20)]
    grid = (4,)
    result = {
        "plain_us": per_call_us(lambda: _copy[grid](x, out, n, BLOCK=1024)),
        "runtime_strides_us": per_call_us(
            lambda: _copy_runtime[grid](x, out, n, *strides, BLOCK=1024)
        ),
        "constexpr_strides_us": per_call_us(
            lambda: _copy_constexpr[grid](x, out, n, *strides, BLOCK=1024)
        ),
    }
    print("launch host us: " + ", ".join(f"{k} {v:.1f}" for k, v in result.items()), flush=True)
    return result


def main():
    if not torch.cuda.is_available():
        sys.exit("product_tile_study.py: no CUDA device")
    result = {
        "device": torch.cuda.get_device_name(0),
        "sms": torch.cuda.get_device_properties(0).multi_processor_count,
        "launch": launch_part(),
        "products": tile_part(),
    }
    if "--json" in sys.argv:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
