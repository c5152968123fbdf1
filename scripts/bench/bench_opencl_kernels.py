"""The kernels of the opencl benchmark (scripts/bench/bench_opencl.py): written
as candidates write them, so they run unchanged under Crucible's shim and the Triton interpreter.
Each `Case` has a Triton launch, the eager PyTorch computation and the FLOPs of one run."""

import pathlib
import sys

import torch
import triton
import triton.language as tl

# The 1024^3 matmul is the tutorial kernel of the differential corpus (K loop over carried
# pointer blocks, grouped program order, bias epilogue): benchmarked as it is tested.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests" / "worker" / "tcl_kernels"))
import matmul as tutorial_matmul  # noqa: E402


@triton.jit
def first_kernel(x_ptr):
    # Compiled first: the process-wide start of the OpenCL runtime (PoCL loads its kernel
    # library on the first build) is measured on its own, not charged to a benchmark kernel.
    tl.store(x_ptr + tl.arange(0, 16), tl.zeros((16,), dtype=tl.float32))


def first_launch(t):
    first_kernel[(1,)](t)


@triton.jit
def pointwise_chain_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # Six pointwise ops in one pass: fma, relu, SiLU (sigmoid and product), scale, subtract.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    z = x * y + 1.0
    z = tl.maximum(z, 0.0)
    z = z * tl.sigmoid(z)
    z = z - 0.5 * y
    tl.store(out_ptr + offs, z, mask=mask)


def pointwise_chain_eager(x, y):
    z = x * y + 1.0
    z = torch.relu(z)
    z = z * torch.sigmoid(z)
    return z - 0.5 * y


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    # The tutorial's row softmax: one row per program.
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * in_stride + offs, mask=offs < n_cols, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_stride + offs, num / den, mask=offs < n_cols)


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, stride, n_cols, eps, BLOCK: tl.constexpr):
    # Layer norm over the last dim with weight and bias, one row per program.
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * stride + offs, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    d = tl.where(mask, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + row * stride + offs, d * rstd * w + b, mask=mask)


@triton.jit
def conv2d_kernel(x_ptr, w_ptr, y_ptr, C, H, W, OC, OH, OW, total, KH: tl.constexpr, KW: tl.constexpr,
                  BLOCK: tl.constexpr):
    # A direct 2-D convolution (stride 1, no padding) in the synthesizer's style: one output per
    # lane, static_range taps, per-lane gathers.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    ow = offs % OW
    oh = (offs // OW) % OH
    oc = (offs // (OW * OH)) % OC
    n = offs // (OW * OH * OC)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for c in range(0, C):
        for kh in tl.static_range(KH):
            for kw in tl.static_range(KW):
                xv = tl.load(x_ptr + ((n * C + c) * H + oh + kh) * W + ow + kw, mask=mask, other=0.0)
                wv = tl.load(w_ptr + ((oc * C + c) * KH + kh) * KW + kw, mask=mask, other=0.0)
                acc += xv * wv
    tl.store(y_ptr + offs, acc, mask=mask)


class Case:
    """One benchmark: `make(scale)` returns the inputs; `triton(inputs)` and `eager(inputs)`
    compute the same output; `flops(inputs)` counts multiply-adds as 2."""

    def __init__(self, name, make, triton_fn, eager, flops=None, interp_scale=1.0):
        self.name, self.make, self.triton, self.eager = name, make, triton_fn, eager
        self.flops = flops
        # Below 1 the interpreter runs this fraction of the rows or elements and its time is
        # scaled up by the element count (it costs the same per program).
        self.interp_scale = interp_scale


def _chain_inputs(scale):
    n = int(8 * 1024 * 1024 * scale) + 3  # 8M+ elements, not a multiple of the block
    g = torch.Generator().manual_seed(0)
    return {"x": torch.randn(n, generator=g), "y": torch.randn(n, generator=g)}


def _chain_triton(t, block=1024):
    n = t["x"].numel()
    out = torch.empty_like(t["x"])
    pointwise_chain_kernel[(triton.cdiv(n, block),)](t["x"], t["y"], out, n, BLOCK=block)
    return out


def _rows_inputs(scale, cols=1024):
    rows = max(1, int(4096 * scale))
    g = torch.Generator().manual_seed(0)
    return {"x": torch.randn(rows, cols, generator=g), "w": torch.randn(cols, generator=g),
            "b": torch.randn(cols, generator=g)}


def _softmax_triton(t):
    x = t["x"]
    out = torch.empty_like(x)
    softmax_kernel[(x.shape[0],)](out, x, x.stride(0), out.stride(0), x.shape[1],
                                  BLOCK=triton.next_power_of_2(x.shape[1]))
    return out


def _layernorm_triton(t):
    x = t["x"]
    y = torch.empty_like(x)
    layernorm_kernel[(x.shape[0],)](x, t["w"], t["b"], y, x.stride(0), x.shape[1], 1e-5,
                                    BLOCK=triton.next_power_of_2(x.shape[1]))
    return y


def _matmul_inputs(scale):
    n = max(64, int(1024 * scale))
    g = torch.Generator().manual_seed(0)
    return {"a": torch.randn(n, n, generator=g), "b": torch.randn(n, n, generator=g), "bias": torch.zeros(n)}


MATMUL_BLOCKS = (128, 128, 32)


def _matmul_triton(t, blocks=None):
    return tutorial_matmul.matmul(t["a"], t["b"], t["bias"], blocks or MATMUL_BLOCKS)


def _conv_inputs(scale):
    g = torch.Generator().manual_seed(0)
    return {"x": torch.randn(2, 8, 34, 34, generator=g), "w": torch.randn(16, 8, 3, 3, generator=g)}


def _conv_triton(t, block=1024):
    x, w = t["x"], t["w"]
    n, c, h, wd = x.shape
    oc, _, kh, kw = w.shape
    oh, ow = h - kh + 1, wd - kw + 1
    y = torch.empty(n, oc, oh, ow)
    total = y.numel()
    conv2d_kernel[(triton.cdiv(total, block),)](x, w, y, c, h, wd, oc, oh, ow, total, KH=kh, KW=kw, BLOCK=block)
    return y


CASES = [
    Case("pointwise_chain", _chain_inputs, _chain_triton, lambda t: pointwise_chain_eager(t["x"], t["y"]),
         flops=lambda t: 8 * t["x"].numel(), interp_scale=0.125),
    Case("softmax", _rows_inputs, _softmax_triton, lambda t: torch.softmax(t["x"], dim=-1), interp_scale=0.125),
    Case("layernorm", _rows_inputs, _layernorm_triton,
         lambda t: torch.nn.functional.layer_norm(t["x"], t["x"].shape[-1:], t["w"], t["b"], 1e-5),
         interp_scale=0.125),
    Case("matmul_1024", _matmul_inputs, _matmul_triton, lambda t: t["a"] @ t["b"],
         flops=lambda t: 2 * t["a"].shape[0] * t["a"].shape[1] * t["b"].shape[1]),
    Case("conv2d_direct", _conv_inputs, _conv_triton,
         lambda t: torch.nn.functional.conv2d(t["x"], t["w"]),
         flops=lambda t: 2 * 2 * 16 * 32 * 32 * 8 * 9),
]
