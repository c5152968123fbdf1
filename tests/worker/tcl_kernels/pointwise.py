"""Pointwise chains (activations, integer C semantics, casts, NaN handling, fp16 storage) at
random lengths including 1, a block and a block plus one, each at two block sizes, against the
Triton interpreter and PyTorch (test_tcl_differential.py)."""

import torch
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def gelu_bias_kernel(x, b, out, n, C, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m).to(tl.float32) + tl.load(b + offs % C, mask=m).to(tl.float32)
    g = 0.5 * v * (1.0 + tl.erf(v * 0.7071067811865476))
    tl.store(out + offs, g, mask=m)


@triton.jit
def silu_mul_kernel(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m, other=0.0).to(tl.float32)
    b = tl.load(y + offs, mask=m, other=0.0).to(tl.float32)
    tl.store(out + offs, a * tl.sigmoid(a) * b, mask=m)


@triton.jit
def softplus_tanh_kernel(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m)
    sp = tl.where(v > 20.0, v, tl.log(1.0 + tl.exp(v)))
    tl.store(out + offs, v * (2.0 * tl.sigmoid(2.0 * sp) - 1.0), mask=m)  # mish


@triton.jit
def clamp_leaky_kernel(x, out, n, lo, hi, slope, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m)
    v = tl.where(v >= 0, v, v * slope)
    v = tl.minimum(tl.maximum(v, lo), hi)
    tl.store(out + offs, v, mask=m)


@triton.jit
def int_ops_kernel(a, b, q, r, s, n, BLOCK: tl.constexpr):
    # C semantics for integer // and % (truncation), shifts and bitwise ops
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(a + offs, mask=m, other=1)
    y = tl.load(b + offs, mask=m, other=1)
    tl.store(q + offs, x // y, mask=m)
    tl.store(r + offs, x % y, mask=m)
    tl.store(s + offs, ((x << 2) ^ (y & 7)) | (x >> 1), mask=m)


@triton.jit
def fp16_chain_kernel(x, y, out, n, BLOCK: tl.constexpr):
    # fp16 storage: each operation rounds to fp16
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m)
    b = tl.load(y + offs, mask=m)
    c = a * b + a
    d = tl.exp(c.to(tl.float32) * 0.5).to(tl.float16)
    tl.store(out + offs, d - b, mask=m)


@triton.jit
def nan_minmax_kernel(x, y, mx, mn, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m)
    b = tl.load(y + offs, mask=m)
    tl.store(mx + offs, tl.maximum(a, b), mask=m)
    tl.store(mn + offs, tl.minimum(a, b), mask=m)


@triton.jit
def math_mix_kernel(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.abs(tl.load(x + offs, mask=m, other=1.0)) + 0.5
    r = tl.sqrt(v) + tl.rsqrt(v) + tl.log2(v) + tl.exp2(-v) + tl.sin(v) * tl.cos(v)
    r = tl.fma(r, v, tl.floor(v) - tl.ceil(v))
    tl.store(out + offs, r, mask=m)


@triton.jit
def strided_copy_cast_kernel(x, out, rows, cols, sx0, sx1, BLOCK: tl.constexpr):
    # a transposed (non-contiguous) fp32 view read through its strides, written as fp16
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < rows * cols
    r = offs // cols
    c = offs % cols
    tl.store(out + offs, tl.load(x + r * sx0 + c * sx1, mask=m).to(tl.float16), mask=m)


def INTERPRETER_WRONG(name):
    # compiled Triton's tl.maximum/minimum ignore a NaN operand (maxnum/minnum); the
    # interpreter's numpy propagates it: these are checked against torch.fmax/fmin only
    return name.startswith(("nanmax", "nanmin"))


def _gen():
    return torch.Generator().manual_seed(11)


LENGTHS = (1, 65, 1000)


def _blocks(n):
    return (64,) if n == 1 else (64, 256)  # n == 1 is its own specialisation


def _grid(n, block):
    return (triton.cdiv(n, block),)


def run():
    g = _gen()
    out = {}
    for n in LENGTHS:
        x = torch.randn(n, generator=g) * 3
        y = torch.randn(n, generator=g)
        xh, yh = x.half(), y.half()
        C = 7
        bias = torch.randn(C, generator=g)
        ia = torch.randint(-50, 50, (n,), generator=g, dtype=torch.int32)
        ib = torch.randint(1, 9, (n,), generator=g, dtype=torch.int32) * torch.where(
            torch.rand(n, generator=g) < 0.5, -1, 1).int()
        xn, yn = x.clone(), y.clone()
        xn[::3] = float("nan")
        for block in _blocks(n):
            k = f"{n}_{block}"
            gr = _grid(n, block)
            o = torch.empty(n)
            gelu_bias_kernel[gr](x, bias, o, n, C, BLOCK=block)
            out[f"gelu_{k}"] = o
            o = torch.empty(n, dtype=torch.float16)
            gelu_bias_kernel[gr](xh, bias.half(), o, n, C, BLOCK=block)
            out[f"gelu_fp16_{k}"] = o
            o = torch.empty(n)
            silu_mul_kernel[gr](x, y, o, n, BLOCK=block)
            out[f"silu_{k}"] = o
            o = torch.empty(n)
            softplus_tanh_kernel[gr](x, o, n, BLOCK=block)
            out[f"mish_{k}"] = o
            o = torch.empty(n)
            clamp_leaky_kernel[gr](x, o, n, -2.5, 4.0, 0.1, BLOCK=block)
            out[f"clamp_{k}"] = o
            q, r, s = (torch.empty(n, dtype=torch.int32) for _ in range(3))
            int_ops_kernel[gr](ia, ib, q, r, s, n, BLOCK=block)
            out[f"idiv_{k}"], out[f"imod_{k}"], out[f"ibits_{k}"] = q, r, s
            o = torch.empty(n, dtype=torch.float16)
            fp16_chain_kernel[gr](xh, yh, o, n, BLOCK=block)
            out[f"fp16chain_{k}"] = o
            mx, mn = torch.empty(n), torch.empty(n)
            nan_minmax_kernel[gr](xn, yn, mx, mn, n, BLOCK=block)
            out[f"nanmax_{k}"], out[f"nanmin_{k}"] = mx, mn
            o = torch.empty(n)
            math_mix_kernel[gr](x, o, n, BLOCK=block)
            out[f"math_{k}"] = o
        base = torch.randn(max(n // 5, 1), 5, generator=g)
        t = base.t()
        o = torch.empty(t.numel(), dtype=torch.float16)
        strided_copy_cast_kernel[_grid(t.numel(), 64)](t, o, t.shape[0], t.shape[1], t.stride(0),
                                                        t.stride(1), BLOCK=64)
        out[f"strided_{n}"] = o
    return out


def expected():
    g = _gen()
    out = {}
    for n in LENGTHS:
        x = torch.randn(n, generator=g) * 3
        y = torch.randn(n, generator=g)
        C = 7
        bias = torch.randn(C, generator=g)
        ia = torch.randint(-50, 50, (n,), generator=g, dtype=torch.int32)
        ib = torch.randint(1, 9, (n,), generator=g, dtype=torch.int32) * torch.where(
            torch.rand(n, generator=g) < 0.5, -1, 1).int()
        for block in _blocks(n):
            k = f"{n}_{block}"
            v = x + bias.repeat(n // C + 1)[:n]
            out[f"gelu_{k}"] = F.gelu(v)
            out[f"silu_{k}"] = F.silu(x) * y
            out[f"mish_{k}"] = F.mish(x)
            xn, yn = x.clone(), y.clone()
            xn[::3] = float("nan")
            out[f"nanmax_{k}"], out[f"nanmin_{k}"] = torch.fmax(xn, yn), torch.fmin(xn, yn)
            out[f"clamp_{k}"] = torch.where(x >= 0, x, x * 0.1).clamp(-2.5, 4.0)
            out[f"idiv_{k}"] = torch.div(ia, ib, rounding_mode="trunc").int()
            out[f"imod_{k}"] = torch.fmod(ia, ib).int()
            out[f"ibits_{k}"] = ((ia << 2) ^ (ib & 7)) | (ia >> 1)
            v = x.abs() + 0.5
            r = v.sqrt() + v.rsqrt() + v.log2() + torch.exp2(-v) + v.sin() * v.cos()
            out[f"math_{k}"] = r * v + (v.floor() - v.ceil())
        base = torch.randn(max(n // 5, 1), 5, generator=g)
        out[f"strided_{n}"] = base.t().reshape(-1).half()
    return out
