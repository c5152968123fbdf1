"""Control flow and block shapes: @jit helpers with early returns (values, tuples, none),
nested helpers, a kernel's early return, while loops, autotune and heuristics; reshape / view /
expand_dims / broadcast_to, 3-D permute, tl.reduce and tl.associative_scan with @jit combine
functions, cumprod; against the Triton interpreter and PyTorch
(test_tcl_differential.py)."""

import time

import torch
import triton
import triton.language as tl


@triton.jit
def _leaky_or_scale(v, slope, limit):
    if limit < 0:
        return v * 2.0
    if limit < 1:
        return tl.where(v > 0, v, v * slope)
    return tl.minimum(v, limit)


@triton.jit
def _sum_and_max(v, m):
    s = tl.sum(tl.where(m, v, 0.0), 0)
    if s > 0:
        return s, tl.max(tl.where(m, v, float("-inf")), 0)
    return -s, tl.min(tl.where(m, v, float("inf")), 0)


@triton.jit
def _store_if_positive(p, v):
    if v <= 0:
        return
    tl.store(p, v)


@triton.jit
def helpers_kernel(x, out, stats, pos, n, slope, limit, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m, other=0.0)
    tl.store(out + offs, _leaky_or_scale(v, slope, limit), mask=m)
    a, b = _sum_and_max(v, m)
    tl.store(stats + 2 * pid, a)
    tl.store(stats + 2 * pid + 1, b)
    _store_if_positive(pos + pid, a - 1.0)


@triton.jit
def early_exit_kernel(x, out, n, n_programs_used, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid >= n_programs_used:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) + 1.0, mask=offs < n)


@triton.jit
def collatz_kernel(start, steps, peak):
    # a while loop with a data-dependent trip count per program
    pid = tl.program_id(0)
    v = tl.load(start + pid)
    count = 0
    top = v
    while v != 1:
        if v % 2 == 0:
            v = v // 2
        else:
            v = 3 * v + 1
        top = tl.maximum(top, v)
        count += 1
    tl.store(steps + pid, count)
    tl.store(peak + pid, top)


def _cpu_bench(fn, quantiles=None):
    # the interpreter's autotuner asks a GPU driver to time configs unless given a timer
    t0 = time.perf_counter()
    fn()
    return [time.perf_counter() - t0] * 3


@triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 128}),
                          triton.Config({"BLOCK": 512})], key=["n"], reset_to_zero=["total"],
                 do_bench=_cpu_bench)
@triton.jit
def autotuned_kernel(x, y, total, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m, other=0.0)
    tl.store(y + offs, v * v - 1.0, mask=m)
    tl.atomic_add(total, tl.sum(tl.where(m, v, 0.0), 0))


@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def heuristic_kernel(x, y, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(y + offs, tl.load(x + offs) * 3.0)
    else:
        tl.store(y + offs, tl.load(x + offs, mask=offs < n) * 3.0, mask=offs < n)


@triton.jit
def reshape_kernel(x, out_t, out_b, R: tl.constexpr, C: tl.constexpr):
    # [R*C] -> [R, C/2, 2] -> permute (2, 0, 1) -> [2R, C/2]; row sums broadcast back
    flat = tl.load(x + tl.arange(0, R * C))
    blk = tl.reshape(flat, (R, C // 2, 2))
    p = tl.permute(blk, 2, 0, 1)
    two = p.view(2 * R, C // 2)
    rs = tl.expand_dims(tl.sum(two, axis=1), 1)
    ro = tl.arange(0, 2 * R)[:, None] * (C // 2) + tl.arange(0, C // 2)[None, :]
    tl.store(out_t + ro, two)
    tl.store(out_b + ro, tl.broadcast_to(rs, (2 * R, C // 2)) - two)


@triton.jit
def _argmax_combine(a, ai, b, bi):
    take_a = (a > b) | ((a == b) & (ai < bi))
    return tl.where(take_a, a, b), tl.where(take_a, ai, bi)


@triton.jit
def _max_combine(a, b):
    return tl.maximum(a, b)


@triton.jit
def _affine_combine(a1, b1, a2, b2):
    # composition of x -> a*x + b maps: a linear recurrence as a scan
    return a1 * a2, b1 * a2 + b2


@triton.jit
def reduce_scan_kernel(x, a, b, vmax, imax, cmax, rec, cprod, flat_idx, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)
    c = tl.arange(0, C)
    offs = r[:, None] * C + c[None, :]
    v = tl.load(x + offs)
    idx = tl.broadcast_to(c[None, :], (R, C))
    mv, mi = tl.reduce((v, idx), 1, _argmax_combine)
    tl.store(vmax + r, mv)
    tl.store(imax + r, mi)
    tl.store(cmax + offs, tl.associative_scan(v, 1, _max_combine, reverse=True))
    ca, cb = tl.associative_scan((tl.load(a + offs), tl.load(b + offs)), 1, _affine_combine)
    tl.store(rec + offs, cb)
    tl.store(cprod + offs, tl.cumprod(v * 0.5 + 1.0, axis=0))
    # (tl.argmax(v, axis=None) on a 2-D block fails in Triton 3.6's own frontend, so it is
    # tested against PyTorch only, in test_tcl_shim.py)
    tl.store(flat_idx, tl.argmax(tl.reshape(v, (R * C,)), 0))
    tl.store(flat_idx + 1, tl.argmin(tl.view(v, R * C), 0))
    tl.store(flat_idx + 2, tl.sum(tl.reshape(v, (2, R // 2, C)), axis=None).to(tl.int32))
    tl.store(flat_idx + 3, tl.reduce(v.to(tl.int32), None, _max_combine))


def _gen():
    return torch.Generator().manual_seed(59)


def _data(g):
    return {"x": torch.randn(1000, generator=g), "starts": torch.randint(1, 60, (9,), generator=g, dtype=torch.int32),
            "r": torch.randn(8 * 16, generator=g), "red": torch.randint(-4, 5, (4, 16), generator=g).float(),
            "a": torch.rand(4, 16, generator=g) + 0.5, "b": torch.randn(4, 16, generator=g)}


def run():
    d = _data(_gen())
    out = {}
    x = d["x"]
    for n in (1000, 1):
        for bl in (64, 256):
            nprog = triton.cdiv(n, bl)
            for limit in (-1.0, 0.5, 1.5):
                o, st, pos = torch.empty(n), torch.empty(2 * nprog), torch.zeros(nprog)
                helpers_kernel[(nprog,)](x, o, st, pos, n, 0.1, limit, BLOCK=bl)
                out[f"helpers_{n}_{bl}_{limit}"], out[f"stats_{n}_{bl}_{limit}"] = o, st
                out[f"pos_{n}_{bl}_{limit}"] = pos
    o = torch.zeros(1000)
    early_exit_kernel[(16,)](x, o, 1000, 5, BLOCK=64)
    out["early_exit"] = o
    steps, peak = torch.empty(9, dtype=torch.int32), torch.empty(9, dtype=torch.int32)
    collatz_kernel[(9,)](d["starts"], steps, peak)
    out["collatz_steps"], out["collatz_peak"] = steps, peak
    for n in (1000, 77):
        y, total = torch.empty(n), torch.zeros(1)
        # the launch calls the grid before the loop moves on, so it sees this iteration's `n`
        autotuned_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, total, n)  # noqa: B023
        out[f"autotuned_{n}"], out[f"autotuned_total_{n}"] = y, total
        for bl in (32, 64):
            y = torch.empty(n)
            heuristic_kernel[(triton.cdiv(n, bl),)](x, y, n, BLOCK=bl)
            out[f"heuristic_{n}_{bl}"] = y
    for R, C in ((8, 16), (2, 4)):
        t, bb = torch.empty(2 * R * C // 2), torch.empty(2 * R * C // 2)
        reshape_kernel[(1,)](d["r"], t, bb, R=R, C=C)
        out[f"reshape_{R}_{C}"], out[f"reshape_b_{R}_{C}"] = t, bb
    v = d["red"]
    vm, im = torch.empty(4), torch.empty(4, dtype=torch.int32)
    cm, rec, cp = torch.empty(4, 16), torch.empty(4, 16), torch.empty(4, 16)
    fi = torch.empty(4, dtype=torch.int32)
    reduce_scan_kernel[(1,)](v, d["a"], d["b"], vm, im, cm, rec, cp, fi, R=4, C=16)
    out.update(red_vmax=vm, red_imax=im, scan_cmax=cm, scan_rec=rec, cumprod=cp, flat_idx=fi)
    return out


def expected():
    d = _data(_gen())
    out = {}
    x = d["x"]
    for n in (1000, 1):
        for bl in (64, 256):
            chunks = list(x[:n].split(bl))
            for limit in (-1.0, 0.5, 1.5):
                xs = x[:n]
                ref = xs * 2 if limit < 0 else (torch.where(xs > 0, xs, xs * 0.1) if limit < 1 else xs.clamp(max=limit))
                out[f"helpers_{n}_{bl}_{limit}"] = ref
                st, pos = [], []
                for ch in chunks:
                    s = ch.sum()
                    st += [s, ch.max()] if s > 0 else [-s, ch.min()]
                    pos.append(st[-2] - 1 if st[-2] - 1 > 0 else torch.tensor(0.0))
                out[f"stats_{n}_{bl}_{limit}"] = torch.stack(st)
                out[f"pos_{n}_{bl}_{limit}"] = torch.stack(pos)
    out["early_exit"] = torch.cat([x[:320] + 1, torch.zeros(680)])
    steps, peak = [], []
    for s in d["starts"].tolist():
        c, top = 0, s
        while s != 1:
            s = s // 2 if s % 2 == 0 else 3 * s + 1
            top, c = max(top, s), c + 1
        steps.append(c)
        peak.append(top)
    out["collatz_steps"], out["collatz_peak"] = torch.tensor(steps, dtype=torch.int32), torch.tensor(peak, dtype=torch.int32)
    for n in (1000, 77):
        out[f"autotuned_{n}"], out[f"autotuned_total_{n}"] = x[:n] ** 2 - 1, x[:n].sum().reshape(1)
        for bl in (32, 64):
            out[f"heuristic_{n}_{bl}"] = x[:n] * 3
    for R, C in ((8, 16), (2, 4)):
        two = d["r"][:R * C].reshape(R, C // 2, 2).permute(2, 0, 1).reshape(2 * R, C // 2)
        out[f"reshape_{R}_{C}"] = two.reshape(-1)
        out[f"reshape_b_{R}_{C}"] = (two.sum(1, keepdim=True) - two).reshape(-1)
    v = d["red"]
    out["red_vmax"], out["red_imax"] = v.max(1).values, v.argmax(1).int()
    out["scan_cmax"] = v.flip(1).cummax(1).values.flip(1)
    rec = torch.empty(4, 16)
    acc = d["b"][:, 0].clone()
    rec[:, 0] = acc
    for j in range(1, 16):
        acc = acc * d["a"][:, j] + d["b"][:, j]
        rec[:, j] = acc
    out["scan_rec"] = rec
    out["cumprod"] = torch.cumprod(v * 0.5 + 1.0, 0)
    out["flat_idx"] = torch.tensor([v.argmax(), v.argmin(), int(v.sum()), int(v.max())], dtype=torch.int32)
    return out
