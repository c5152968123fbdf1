"""tl.argmax / argmin (axis 0 and 1, keep_dims, ties, NaN) and tl.max(return_indices=True)
against the Triton interpreter and PyTorch (test_tcl_differential.py)."""

import torch
import triton
import triton.language as tl


@triton.jit
def argreduce_kernel(x, rows_out, cols_out, kept_out, mx_val, mx_idx, n_rows, n_cols,
                     R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    m = (r[:, None] < n_rows) & (c[None, :] < n_cols)
    v = tl.load(x + r[:, None] * n_cols + c[None, :], mask=m, other=float("-inf"))
    w = tl.load(x + r[:, None] * n_cols + c[None, :], mask=m, other=float("inf"))
    tl.store(rows_out + r, tl.argmax(v, axis=1), mask=r < n_rows)
    tl.store(cols_out + c, tl.argmin(w, 0), mask=c < n_cols)
    kept = tl.argmax(v, axis=1, keep_dims=True)  # [R, 1]
    tl.store(kept_out + r[:, None] + c[None, :] * 0, kept, mask=(r[:, None] < n_rows) & (c[None, :] < 1))
    val, idx = tl.max(v, axis=1, return_indices=True)
    tl.store(mx_val + r, val, mask=r < n_rows)
    tl.store(mx_idx + r, idx, mask=r < n_rows)


def _inputs():
    g = torch.Generator().manual_seed(6)
    x = torch.randint(-3, 4, (13, 37), generator=g).float()  # many ties
    y = torch.randn(5, 100, generator=g).half()
    y[2, 17] = float("nan")
    return x, y


def _run(x, R, C):
    n_rows, n_cols = x.shape
    rows = torch.empty(n_rows, dtype=torch.int32)
    cols = torch.empty(n_cols, dtype=torch.int32)
    kept = torch.empty(n_rows, dtype=torch.int32)
    mv, mi = torch.empty(n_rows, dtype=x.dtype), torch.empty(n_rows, dtype=torch.int32)
    argreduce_kernel[(1,)](x, rows, cols, kept, mv, mi, n_rows, n_cols, R=R, C=C)
    return rows, cols, kept, mv, mi


def run():
    out = {}
    for name, x, R, C in (("ties", _inputs()[0], 16, 64), ("fp16_nan", _inputs()[1], 8, 128)):
        for key, t in zip(("argmax_rows", "argmin_cols", "argmax_kept", "max_val", "max_idx"), _run(x, R, C)):
            out[f"{name}_{key}"] = t
    return out


def expected():
    out = {}
    x, _ = _inputs()  # torch's argmax/argmin return the first index of the extreme too
    out["ties_argmax_rows"] = x.argmax(1).int()
    out["ties_argmin_cols"] = x.argmin(0).int()
    out["ties_argmax_kept"] = x.argmax(1).int()
    out["ties_max_val"] = x.max(1).values
    out["ties_max_idx"] = x.argmax(1).int()
    return out
