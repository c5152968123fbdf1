"""Attention-like blocks (q k^T, softmax, p v; online softmax over key tiles, causal masking)
and atomics (integer and float add, max/min with negatives, xchg, cas, fp16 add, returned old
values) against the Triton interpreter and PyTorch (test_tcl_differential.py). Atomic results
that depend on the order programs run in are sorted before comparison."""

import torch
import triton
import triton.language as tl


@triton.jit
def attention_kernel(q, k, v, o, L, S, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                     CAUSAL: tl.constexpr, scale):
    # one head; BM queries per program, keys in tiles of BN with an online softmax
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    qb = tl.load(q + rm[:, None] * D + rd[None, :], mask=rm[:, None] < L, other=0.0)
    m_i = tl.full((BM,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BM,), dtype=tl.float32)
    acc = tl.zeros((BM, D), dtype=tl.float32)
    for n0 in range(0, S, BN):
        rn = n0 + tl.arange(0, BN)
        kb = tl.load(k + rn[:, None] * D + rd[None, :], mask=rn[:, None] < S, other=0.0)
        s = tl.dot(qb, tl.trans(kb)) * scale
        valid = rn[None, :] < S
        if CAUSAL:
            valid = valid & (rn[None, :] <= rm[:, None])
        s = tl.where(valid, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        vb = tl.load(v + rn[:, None] * D + rd[None, :], mask=rn[:, None] < S, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(vb.dtype), vb)
        m_i = m_new
    tl.store(o + rm[:, None] * D + rd[None, :], acc / l_i[:, None], mask=rm[:, None] < L)


@triton.jit
def histogram_kernel(x, hist, n, BINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m, other=0)
    tl.atomic_add(hist + v % BINS, 1, mask=m)


@triton.jit
def float_atomics_kernel(x, acc, mx, mn, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m, other=0.0)
    tl.atomic_add(acc + offs % 3, v, mask=m, sem="acq_rel", scope="gpu")
    tl.atomic_max(mx + offs % 2, v, mask=m)
    tl.atomic_min(mn + offs % 2, v, mask=m)
    tl.atomic_add(acc + 3, tl.sum(tl.where(m, v, 0.0), 0))  # scalar pointer


@triton.jit
def ticket_kernel(counter, tickets, n, BLOCK: tl.constexpr):
    # every lane takes a ticket: the old values are a permutation of 0..n-1
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    t = tl.atomic_add(counter + offs * 0, 1, mask=m)
    tl.store(tickets + offs, t, mask=m)


@triton.jit
def xchg_cas_kernel(slots, owner, old_owner, claimed, n, BLOCK: tl.constexpr):
    # cas: claim slot 0 once per program; xchg: write each lane's id, return the previous
    pid = tl.program_id(0)
    prev = tl.atomic_cas(owner + pid % 2, -1, pid)
    tl.store(claimed + pid, prev)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    o = tl.atomic_xchg(slots + offs, offs.to(tl.int64) * 10, mask=m)
    tl.store(old_owner + offs, o, mask=m)


@triton.jit
def fp16_atomic_kernel(x, acc, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.atomic_add(acc + offs % 4, tl.load(x + offs, mask=m, other=0.0), mask=m)


def _gen():
    return torch.Generator().manual_seed(47)


def _attn_inputs(g):
    return [torch.randn(t, 16, generator=g) * 0.5 for t in (21, 37, 37)]


def _atomic_inputs(g):
    ints = torch.randint(0, 1000, (777,), generator=g, dtype=torch.int32)
    floats = torch.randint(-40, 40, (301,), generator=g).float() * 0.25  # exact sums in any order
    halves = torch.randint(-8, 8, (150,), generator=g).half() * 0.5
    return ints, floats, halves


def run():
    g = _gen()
    out = {}
    q, k, v = _attn_inputs(g)
    for causal in (False, True):
        for bm, bn in ((16, 16), (32, 8)):
            for dt in (torch.float32, torch.float16):
                o = torch.empty(21, 16)
                attention_kernel[(triton.cdiv(21, bm),)](q.to(dt), k.to(dt), v.to(dt), o, 21, 37, D=16,
                                                         BM=bm, BN=bn, CAUSAL=causal, scale=0.25)
                out[f"attn_{causal}_{bm}_{bn}_{str(dt)[6:]}"] = o
    ints, floats, halves = _atomic_inputs(g)
    for bl in (64, 256):
        h = torch.zeros(10, dtype=torch.int32)
        histogram_kernel[(triton.cdiv(777, bl),)](ints, h, 777, BINS=10, BLOCK=bl)
        out[f"hist_{bl}"] = h
        h = torch.zeros(10, dtype=torch.int64)
        histogram_kernel[(triton.cdiv(777, bl),)](ints.long(), h, 777, BINS=10, BLOCK=bl)
        out[f"hist64_{bl}"] = h
        acc, mx, mn = torch.zeros(4), torch.full((2,), -100.0), torch.full((2,), 100.0)
        float_atomics_kernel[(triton.cdiv(301, bl),)](floats, acc, mx, mn, 301, BLOCK=bl)
        out[f"fadd_{bl}"], out[f"fmax_{bl}"], out[f"fmin_{bl}"] = acc, mx, mn
        acc = torch.zeros(4, dtype=torch.float64)
        float_atomics_kernel[(triton.cdiv(301, bl),)](floats.double(), acc, mx.double(), mn.double(),
                                                      301, BLOCK=bl)
        out[f"dadd_{bl}"] = acc
        counter, tickets = torch.zeros(1, dtype=torch.int32), torch.empty(777, dtype=torch.int32)
        ticket_kernel[(triton.cdiv(777, bl),)](counter, tickets, 777, BLOCK=bl)
        out[f"tickets_{bl}"] = tickets.sort().values
        out[f"counter_{bl}"] = counter
        slots = torch.full((300,), -5, dtype=torch.int64)
        owner = torch.full((2,), -1, dtype=torch.int32)
        nprog = triton.cdiv(300, bl)
        old, claimed = torch.empty(300, dtype=torch.int64), torch.empty(nprog, dtype=torch.int32)
        xchg_cas_kernel[(nprog,)](slots, owner, old, claimed, 300, BLOCK=bl)
        out[f"xchg_slots_{bl}"], out[f"xchg_old_{bl}"] = slots, old
        out[f"cas_claimed_{bl}"] = (claimed == -1).sum().reshape(1)  # one winner per slot used
        out[f"cas_owner_set_{bl}"] = (owner >= 0).int()
        acc = torch.zeros(4, dtype=torch.float16)
        fp16_atomic_kernel[(triton.cdiv(150, bl),)](halves, acc, 150, BLOCK=bl)
        out[f"hadd_{bl}"] = acc
    return out


def _attention_ref(q, k, v, causal):
    s = (q @ k.t()) * 0.25
    if causal:
        s = s.masked_fill(torch.arange(37)[None, :] > torch.arange(21)[:, None], float("-inf"))
    return torch.softmax(s, 1) @ v


def expected():
    g = _gen()
    out = {}
    q, k, v = _attn_inputs(g)
    for causal in (False, True):
        ref = _attention_ref(q, k, v, causal)
        for bm, bn in ((16, 16), (32, 8)):
            out[f"attn_{causal}_{bm}_{bn}_float32"] = ref
    ints, floats, halves = _atomic_inputs(g)
    for bl in (64, 256):
        out[f"hist_{bl}"] = torch.bincount(ints.long() % 10, minlength=10).int()
        out[f"hist64_{bl}"] = torch.bincount(ints.long() % 10, minlength=10)
        idx = torch.arange(301)
        sums = torch.stack([floats[idx % 3 == j].sum() for j in range(3)] + [floats.sum()])
        out[f"fadd_{bl}"], out[f"dadd_{bl}"] = sums, sums.double()
        out[f"fmax_{bl}"] = torch.stack([floats[idx % 2 == j].max() for j in range(2)])
        out[f"fmin_{bl}"] = torch.stack([floats[idx % 2 == j].min() for j in range(2)])
        out[f"tickets_{bl}"] = torch.arange(777, dtype=torch.int32)
        out[f"counter_{bl}"] = torch.tensor([777], dtype=torch.int32)
        out[f"xchg_slots_{bl}"] = torch.arange(300) * 10
        out[f"xchg_old_{bl}"] = torch.full((300,), -5, dtype=torch.int64)
        nprog = triton.cdiv(300, bl)
        out[f"cas_claimed_{bl}"] = torch.tensor([min(nprog, 2)])
        out[f"cas_owner_set_{bl}"] = torch.tensor([1, 1 if nprog > 1 else 0], dtype=torch.int32)
        out[f"hadd_{bl}"] = torch.stack([halves[torch.arange(150) % 4 == j].float().sum() for j in range(4)]).half()
    return out
