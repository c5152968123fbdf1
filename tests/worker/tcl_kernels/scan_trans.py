"""tl.cumsum (axes, reverse, integer promotion, fp16) and tl.trans / .T (also inside tl.dot)
against the Triton interpreter and PyTorch (test_tcl_differential.py)."""

import torch
import triton
import triton.language as tl


@triton.jit
def cumsum_kernel(x, o_rows, o_cols_rev, n_rows, n_cols, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    m = (r[:, None] < n_rows) & (c[None, :] < n_cols)
    offs = r[:, None] * n_cols + c[None, :]
    v = tl.load(x + offs, mask=m, other=0)
    tl.store(o_rows + offs, tl.cumsum(v, axis=1), mask=m)
    tl.store(o_cols_rev + offs, v.cumsum(0, reverse=True), mask=m)


@triton.jit
def trans_kernel(q, k, s, t, M: tl.constexpr, N: tl.constexpr, D: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rd = tl.arange(0, D)
    qb = tl.load(q + rm[:, None] * D + rd[None, :])
    kb = tl.load(k + rn[:, None] * D + rd[None, :])
    tl.store(s + rm[:, None] * N + rn[None, :], tl.dot(qb, tl.trans(kb)))  # q @ k^T
    tl.store(t + rd[:, None] * M + rm[None, :], qb.T)


def _inputs():
    g = torch.Generator().manual_seed(7)
    return (torch.randn(13, 37, generator=g), torch.randint(-100, 100, (5, 30), generator=g).to(torch.int8),
            torch.randn(9, 20, generator=g).half(), torch.randn(16, 32, generator=g),
            torch.randn(64, 32, generator=g))


def run():
    out = {}
    x32, x8, x16, q, k = _inputs()
    for name, x, R, C in (("fp32", x32, 16, 64), ("int8", x8, 8, 32), ("fp16", x16, 16, 32)):
        dt = torch.int32 if x.dtype == torch.int8 else x.dtype
        a, b = torch.empty(x.shape, dtype=dt), torch.empty(x.shape, dtype=dt)
        cumsum_kernel[(1,)](x, a, b, x.shape[0], x.shape[1], R=R, C=C)
        out[f"cumsum_rows_{name}"], out[f"cumsum_cols_rev_{name}"] = a, b
    s, t = torch.empty(16, 64), torch.empty(32, 16)
    trans_kernel[(1,)](q, k, s, t, M=16, N=64, D=32)
    out["q_kT"], out["qT"] = s, t
    return out


def expected():
    out = {}
    x32, x8, x16, q, k = _inputs()
    for name, x in (("fp32", x32), ("int8", x8)):
        dt = torch.int32 if x.dtype == torch.int8 else torch.float64
        out[f"cumsum_rows_{name}"] = x.to(dt).cumsum(1).to(torch.int32 if name == "int8" else x.dtype)
        out[f"cumsum_cols_rev_{name}"] = x.to(dt).flip(0).cumsum(0).flip(0).to(
            torch.int32 if name == "int8" else x.dtype)
    out["q_kT"] = (q.double() @ k.double().t()).float()
    out["qT"] = q.t().contiguous()
    return out
