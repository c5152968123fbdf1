"""Kernels in the shapes Crucible's synthesizer (core/kernel_synth/lowering.cpp) emits, against the
Triton interpreter and PyTorch (test_tcl_differential.py): a direct conv2d with tl.static_range
taps and zero-padding masks inside a runtime channel loop (lanes decoded by a @jit helper
returning a tuple), a max pool starting from -inf, and a
row cumsum accumulated in fp64 over several rows per program."""

import torch
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _nchw_lanes(n_elements, C, Oh, Ow, BLOCK: tl.constexpr):
    # one output element per lane: its flat offset, mask and (batch, channel, row, column)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    rem = offs // Ow
    return offs, offs < n_elements, rem // Oh // C, rem // Oh % C, rem % Oh, offs % Ow


@triton.jit
def conv_kernel(p_x, p_w, out, n_elements, C_OUT, CIN, Oh, Ih, Ow, Iw, x_s0, x_s1, x_s2, x_s3,
                w_s0, w_s1, w_s2, w_s3, Kh: tl.constexpr, Sh: tl.constexpr, Ph: tl.constexpr,
                Kw: tl.constexpr, Sw: tl.constexpr, Pw: tl.constexpr, BLOCK: tl.constexpr):
    offs, mask, bi, co, oh, ow = _nchw_lanes(n_elements, C_OUT, Oh, Ow, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for ci in range(0, CIN):
        for kh in tl.static_range(Kh):
            ih = oh * Sh - Ph + kh
            for kw in tl.static_range(Kw):
                iw = ow * Sw - Pw + kw
                xv = tl.load(p_x + bi * x_s0 + ci * x_s1 + ih * x_s2 + iw * x_s3,
                             mask=mask & (ih >= 0) & (ih < Ih) & (iw >= 0) & (iw < Iw), other=0.0)
                wv = tl.load(p_w + co * w_s0 + ci * w_s1 + kh * w_s2 + kw * w_s3, mask=mask,
                             other=0.0)
                acc += xv * wv
    tl.store(out + offs, acc, mask=mask)


@triton.jit
def maxpool_kernel(p_x, out, n_elements, C, Oh, Ih, Ow, Iw, x_s0, x_s1, x_s2, x_s3,
                   K: tl.constexpr, S: tl.constexpr, P: tl.constexpr, BLOCK: tl.constexpr):
    offs, mask, bi, c, oh, ow = _nchw_lanes(n_elements, C, Oh, Ow, BLOCK)
    acc = tl.full((BLOCK,), float('-inf'), dtype=tl.float32)
    for kh in tl.static_range(K):
        ih = oh * S - P + kh
        for kw in tl.static_range(K):
            iw = ow * S - P + kw
            xv = tl.load(p_x + bi * x_s0 + c * x_s1 + ih * x_s2 + iw * x_s3,
                         mask=mask & (ih >= 0) & (ih < Ih) & (iw >= 0) & (iw < Iw),
                         other=float('-inf'))
            acc = tl.maximum(acc, xv)
    tl.store(out + offs, acc, mask=mask)


@triton.jit
def cumsum_kernel(p_x, x_s0, x_s1, out, o_s0, o_s1, n_rows, R, ROWS: tl.constexpr,
                  BLOCK_R: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)[:, None]
    cols = tl.arange(0, BLOCK_R)[None, :]
    fmask = (rows < n_rows) & (cols < R)
    x = tl.load(p_x + rows * x_s0 + cols * x_s1, mask=fmask, other=0.0)
    v = tl.cumsum(tl.where(fmask, x, 0.0).to(tl.float64), axis=1).to(tl.float32)
    tl.store(out + rows * o_s0 + cols * o_s1, v, mask=fmask)


def _inputs():
    g = torch.Generator().manual_seed(11)
    return (torch.randn(2, 3, 9, 11, generator=g), torch.randn(5, 3, 3, 5, generator=g),
            torch.randn(7, 45, generator=g))


def _conv_shapes(x, w, stride, padding):
    oh = (x.shape[2] + 2 * padding[0] - w.shape[2]) // stride + 1
    ow = (x.shape[3] + 2 * padding[1] - w.shape[3]) // stride + 1
    return oh, ow


def run():
    x, w, rows = _inputs()
    out = {}
    oh, ow = _conv_shapes(x, w, 2, (1, 2))
    conv = torch.empty(x.shape[0], w.shape[0], oh, ow)
    n = conv.numel()
    conv_kernel[(triton.cdiv(n, 64),)](x, w, conv, n, w.shape[0], x.shape[1], oh, x.shape[2], ow,
                                       x.shape[3], *x.stride(), *w.stride(), Kh=3, Sh=2, Ph=1,
                                       Kw=5, Sw=2, Pw=2, BLOCK=64)
    out["conv2d"] = conv
    pool = torch.empty(x.shape[0], x.shape[1], 5, 6)
    n = pool.numel()
    maxpool_kernel[(triton.cdiv(n, 32),)](x, pool, n, x.shape[1], 5, x.shape[2], 6, x.shape[3],
                                          *x.stride(), K=3, S=2, P=1, BLOCK=32)
    out["max_pool2d"] = pool
    cs = torch.empty_like(rows)
    cumsum_kernel[(triton.cdiv(rows.shape[0], 4),)](rows, *rows.stride(), cs, *cs.stride(),
                                                    rows.shape[0], rows.shape[1], ROWS=4,
                                                    BLOCK_R=64)
    out["cumsum_fp64"] = cs
    return out


def expected():
    x, w, rows = _inputs()
    return {"conv2d": F.conv2d(x.double(), w.double(), stride=2, padding=(1, 2)).float(),
            "max_pool2d": F.max_pool2d(x, 3, stride=2, padding=1),
            "cumsum_fp64": rows.double().cumsum(1).float()}
