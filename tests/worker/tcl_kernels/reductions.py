"""Reductions and row kernels: sums and extrema over either axis and over the whole block, a
runtime loop over columns, integer sums, softmax (one block and online over a loop),
log_softmax, layernorm and rmsnorm with affine weights, in fp32 and fp16 at odd shapes, each at
two block sizes, against the Triton interpreter and PyTorch (test_tcl_differential.py)."""

import torch
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def row_stats_kernel(x, s, mx, mn, mean, n_rows, n_cols, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    c = tl.arange(0, BLOCK)
    m = (r[:, None] < n_rows) & (c[None, :] < n_cols)
    v = tl.load(x + r[:, None] * n_cols + c[None, :], mask=m, other=0.0).to(tl.float32)
    tl.store(s + r, tl.sum(v, axis=1), mask=r < n_rows)
    tl.store(mx + r, tl.max(tl.where(m, v, float("-inf")), axis=1), mask=r < n_rows)
    tl.store(mn + r, tl.min(tl.where(m, v, float("inf")), 1), mask=r < n_rows)
    tl.store(mean + r, tl.sum(v, axis=1, keep_dims=True).reshape(ROWS) / n_cols, mask=r < n_rows)


@triton.jit
def col_sum_kernel(x, out, n_rows, n_cols, BR: tl.constexpr, BC: tl.constexpr):
    c = tl.program_id(0) * BC + tl.arange(0, BC)
    acc = tl.zeros((BC,), dtype=tl.float32)
    for r0 in range(0, n_rows, BR):
        r = r0 + tl.arange(0, BR)
        m = (r[:, None] < n_rows) & (c[None, :] < n_cols)
        acc += tl.sum(tl.load(x + r[:, None] * n_cols + c[None, :], mask=m, other=0.0), axis=0)
    tl.store(out + c, acc, mask=c < n_cols)


@triton.jit
def total_kernel(x, out, isum, n_rows, n_cols, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    m = (r < n_rows) & (c < n_cols)
    v = tl.load(x + r * n_cols + c, mask=m, other=0.0)
    tl.store(out, tl.sum(v))
    tl.store(out + 1, tl.max(tl.where(m, v, -1e30)))
    iv = (v * 4).to(tl.int8)
    tl.store(isum, tl.sum(iv))  # int8 sums in int32


@triton.jit
def softmax_kernel(x, out, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    v = tl.load(x + row * stride + c, mask=c < n_cols, other=float("-inf")).to(tl.float32)
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(out + row * stride + c, e / tl.sum(e, axis=0), mask=c < n_cols)


@triton.jit
def online_softmax_kernel(x, out, n_cols, BLOCK: tl.constexpr):
    # two passes over column tiles: running max and rescaled sum, then the normalised values
    row = tl.program_id(0)
    m_i = float("-inf")
    l_i = 0.0
    for c0 in range(0, n_cols, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        v = tl.load(x + row * n_cols + c, mask=c < n_cols, other=float("-inf"))
        m_new = tl.maximum(m_i, tl.max(v, 0))
        l_i = l_i * tl.exp(m_i - m_new) + tl.sum(tl.exp(v - m_new), 0)
        m_i = m_new
    for c0 in range(0, n_cols, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        v = tl.load(x + row * n_cols + c, mask=c < n_cols, other=0.0)
        tl.store(out + row * n_cols + c, tl.exp(v - m_i) / l_i, mask=c < n_cols)


@triton.jit
def log_softmax_kernel(x, out, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    v = tl.load(x + row * n_cols + c, mask=c < n_cols, other=float("-inf"))
    z = v - tl.max(v, 0)
    tl.store(out + row * n_cols + c, z - tl.log(tl.sum(tl.exp(z), 0)), mask=c < n_cols)


@triton.jit
def layernorm_kernel(x, w, b, out, mean_out, rstd_out, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    m = c < n_cols
    v = tl.load(x + row * n_cols + c, mask=m, other=0.0).to(tl.float32)
    mean = tl.sum(v, axis=0) / n_cols
    d = tl.where(m, v - mean, 0.0)
    var = tl.sum(d * d, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    y = d * rstd * tl.load(w + c, mask=m) + tl.load(b + c, mask=m)
    tl.store(out + row * n_cols + c, y, mask=m)
    tl.store(mean_out + row, mean)
    tl.store(rstd_out + row, rstd)


@triton.jit
def rmsnorm_kernel(x, w, out, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        v = tl.load(x + row * n_cols + c, mask=c < n_cols, other=0.0).to(tl.float32)
        acc += v * v
    rrms = tl.rsqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for c0 in range(0, n_cols, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        v = tl.load(x + row * n_cols + c, mask=c < n_cols, other=0.0).to(tl.float32)
        g = tl.load(w + c, mask=c < n_cols, other=0.0).to(tl.float32)
        tl.store(out + row * n_cols + c, v * rrms * g, mask=c < n_cols)


SHAPES = ((1, 1), (3, 100), (17, 33))


def _gen():
    return torch.Generator().manual_seed(23)


def _inputs(g, rows, cols):
    x = torch.randn(rows, cols, generator=g)
    return x, torch.randn(cols, generator=g), torch.randn(cols, generator=g)


def run():
    g = _gen()
    out = {}
    for rows, cols in SHAPES:
        x, w, b = _inputs(g, rows, cols)
        p2 = triton.next_power_of_2(cols)
        for dt in (torch.float32, torch.float16):
            xs = x.to(dt)
            for rb in (1, 4):
                k = f"{rows}x{cols}_{str(dt)[6:]}_{rb}"
                s, mx, mn, mean = (torch.empty(rows) for _ in range(4))
                row_stats_kernel[(triton.cdiv(rows, rb),)](xs, s, mx, mn, mean, rows, cols, ROWS=rb,
                                                            BLOCK=p2)
                out[f"sum_{k}"], out[f"max_{k}"], out[f"min_{k}"], out[f"mean_{k}"] = s, mx, mn, mean
            for bl in (16, 64):
                k = f"{rows}x{cols}_{str(dt)[6:]}_{bl}"
                o = torch.empty(rows, cols, dtype=dt)
                online_softmax_kernel[(rows,)](xs, o, cols, BLOCK=bl)
                out[f"osoftmax_{k}"] = o
                o = torch.empty(rows, cols, dtype=dt)
                rmsnorm_kernel[(rows,)](xs, w.to(dt), o, cols, 1e-6, BLOCK=bl)
                out[f"rmsnorm_{k}"] = o
            k = f"{rows}x{cols}_{str(dt)[6:]}"
            o = torch.empty(rows, cols, dtype=dt)
            softmax_kernel[(rows,)](xs, o, cols, cols, BLOCK=p2)
            out[f"softmax_{k}"] = o
            o = torch.empty(rows, cols, dtype=dt)
            log_softmax_kernel[(rows,)](xs, o, cols, BLOCK=p2)
            out[f"logsoftmax_{k}"] = o
            o, mu, rs = torch.empty(rows, cols, dtype=dt), torch.empty(rows), torch.empty(rows)
            layernorm_kernel[(rows,)](xs, w.to(dt), b.to(dt), o, mu, rs, cols, 1e-5, BLOCK=p2)
            out[f"layernorm_{k}"], out[f"lnmean_{k}"], out[f"lnrstd_{k}"] = o, mu, rs
        for br, bc in ((2, 8), (8, 32)):
            o = torch.empty(cols)
            col_sum_kernel[(triton.cdiv(cols, bc),)](x, o, rows, cols, BR=br, BC=bc)
            out[f"colsum_{rows}x{cols}_{br}_{bc}"] = o
        tot, isum = torch.empty(2), torch.empty(1, dtype=torch.int32)
        total_kernel[(1,)](x, tot, isum, rows, cols, R=triton.next_power_of_2(rows), C=p2)
        out[f"total_{rows}x{cols}"], out[f"isum_{rows}x{cols}"] = tot, isum
    return out


def expected():
    g = _gen()
    out = {}
    for rows, cols in SHAPES:
        x, w, b = _inputs(g, rows, cols)
        for dt in (torch.float32, torch.float16):
            xs = x.to(dt)
            xf = xs.float()
            for rb in (1, 4):
                k = f"{rows}x{cols}_{str(dt)[6:]}_{rb}"
                out[f"sum_{k}"], out[f"max_{k}"] = xf.sum(1), xf.max(1).values
                out[f"min_{k}"], out[f"mean_{k}"] = xf.min(1).values, xf.mean(1)
            if dt == torch.float16:
                continue  # fp16 outputs: compared with the interpreter
            for bl in (16, 64):
                k = f"{rows}x{cols}_float32_{bl}"
                out[f"osoftmax_{k}"] = torch.softmax(x, 1)
                out[f"rmsnorm_{k}"] = x * torch.rsqrt(x.pow(2).mean(1, keepdim=True) + 1e-6) * w
            k = f"{rows}x{cols}_float32"
            out[f"softmax_{k}"] = torch.softmax(x, 1)
            out[f"logsoftmax_{k}"] = torch.log_softmax(x, 1)
            out[f"layernorm_{k}"] = F.layer_norm(x, (cols,), w, b, 1e-5)
            out[f"lnmean_{k}"] = x.mean(1)
            out[f"lnrstd_{k}"] = torch.rsqrt(x.var(1, unbiased=False) + 1e-5)
        for br, bc in ((2, 8), (8, 32)):
            out[f"colsum_{rows}x{cols}_{br}_{bc}"] = x.sum(0)
        out[f"total_{rows}x{cols}"] = torch.stack([x.sum(), x.max()])
        out[f"isum_{rows}x{cols}"] = (x * 4).to(torch.int8).int().sum().reshape(1).int()
    return out
