"""More task-shaped kernels: cross entropy, cosine similarity, L2 normalisation, group norm
through a reshape, inference batch norm, gemv with a K loop, embedding gather, index_add
through atomics, a tiled transpose, max pooling with strides, bf16 and fp16 SwiGLU, int64
offsets; fp32, fp16 and bf16 at odd shapes and two block sizes, against the Triton interpreter
and PyTorch (test_tcl_differential.py)."""

import torch
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def cross_entropy_kernel(logits, target, loss, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    v = tl.load(logits + row * n_cols + c, mask=c < n_cols, other=float("-inf")).to(tl.float32)
    mx = tl.max(v, 0)
    lse = mx + tl.log(tl.sum(tl.exp(v - mx), 0))
    t = tl.load(target + row)
    tl.store(loss + row, lse - tl.sum(tl.where(c == t, v, 0.0), 0))


@triton.jit
def cosine_kernel(a, b, out, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    dot = 0.0
    na = 0.0
    nb = 0.0
    for c0 in range(0, n_cols, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        x = tl.load(a + row * n_cols + c, mask=c < n_cols, other=0.0)
        y = tl.load(b + row * n_cols + c, mask=c < n_cols, other=0.0)
        dot += tl.sum(x * y, 0)
        na += tl.sum(x * x, 0)
        nb += tl.sum(y * y, 0)
    tl.store(out + row, dot / tl.maximum(tl.sqrt(na) * tl.sqrt(nb), eps))


@triton.jit
def l2norm_kernel(x, out, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    v = tl.load(x + row * n_cols + c, mask=c < n_cols, other=0.0).to(tl.float32)
    nrm = tl.maximum(tl.sqrt(tl.sum(v * v, 0)), 1e-12)
    tl.store(out + row * n_cols + c, (v / nrm).to(out.dtype.element_ty), mask=c < n_cols)


@triton.jit
def group_norm_kernel(x, w, b, out, C, HW, eps, G: tl.constexpr, CPG: tl.constexpr, BHW: tl.constexpr):
    # one image per program: [G * CPG, BHW] viewed as [G, CPG * BHW] for the statistics
    n = tl.program_id(0)
    ch = tl.arange(0, G * CPG)
    p = tl.arange(0, BHW)
    m = p[None, :] < HW
    v = tl.load(x + (n * C + ch[:, None]) * HW + p[None, :], mask=m, other=0.0)
    cnt = CPG * HW
    grp = tl.reshape(v, (G, CPG * BHW))
    mean = tl.sum(grp, axis=1) / cnt
    mask_g = tl.reshape(tl.broadcast_to(m, (G * CPG, BHW)), (G, CPG * BHW))
    d = tl.where(mask_g, grp - mean[:, None], 0.0)
    rstd = tl.rsqrt(tl.sum(d * d, axis=1) / cnt + eps)
    y = tl.reshape(d * rstd[:, None], (G * CPG, BHW))
    y = y * tl.load(w + ch)[:, None] + tl.load(b + ch)[:, None]
    tl.store(out + (n * C + ch[:, None]) * HW + p[None, :], y, mask=m)


@triton.jit
def batchnorm_eval_kernel(x, mean, var, w, b, out, C, HW, eps, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    c = pid % C
    scale = tl.load(w + c) / tl.sqrt(tl.load(var + c) + eps)
    shift = tl.load(b + c) - tl.load(mean + c) * scale
    for s in range(0, HW, BLOCK):
        i = s + tl.arange(0, BLOCK)
        v = tl.load(x + pid * HW + i, mask=i < HW)
        tl.store(out + pid * HW + i, tl.maximum(v * scale + shift, 0.0), mask=i < HW)


@triton.jit
def gemv_kernel(a, x, y, M, K, BM: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    acc = tl.zeros((BM,), dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        blk = tl.load(a + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        acc += tl.sum(blk * tl.load(x + rk, mask=rk < K, other=0.0)[None, :], axis=1)
    tl.store(y + rm, acc, mask=rm < M)


@triton.jit
def embedding_kernel(ids, table, out, n_ids, D, BD: tl.constexpr):
    i = tl.program_id(0)
    d = tl.arange(0, BD)
    row = tl.load(ids + i)  # int64 ids
    tl.store(out + i * D + d, tl.load(table + row * D + d, mask=d < D), mask=d < D)


@triton.jit
def index_add_kernel(src, index, dst, n, D, BD: tl.constexpr):
    i = tl.program_id(0)
    d = tl.arange(0, BD)
    j = tl.load(index + i)
    tl.atomic_add(dst + j * D + d, tl.load(src + i * D + d, mask=d < D), mask=d < D)


@triton.jit
def transpose_kernel(x, out, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    t = tl.load(x + rm[:, None] * N + rn[None, :], mask=(rm[:, None] < M) & (rn[None, :] < N))
    tl.store(out + rn[:, None] * M + rm[None, :], tl.trans(t), mask=(rn[:, None] < N) & (rm[None, :] < M))


@triton.jit
def maxpool_kernel(x, out, H, W, OH, OW, K: tl.constexpr, S: tl.constexpr, P: tl.constexpr,
                   BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    p = tl.arange(0, BLOCK)
    oh = p // OW
    ow = p % OW
    acc = tl.full((BLOCK,), float("-inf"), tl.float32)
    for kh in tl.static_range(K):
        for kw in tl.static_range(K):
            ih = oh * S - P + kh
            iw = ow * S - P + kw
            m = (p < OH * OW) & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
            acc = tl.maximum(acc, tl.load(x + pid * H * W + ih * W + iw, mask=m, other=float("-inf")))
    tl.store(out + pid * OH * OW + p, acc, mask=p < OH * OW)


@triton.jit
def swiglu_kernel(gate, up, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    g = tl.load(gate + offs, mask=m).to(tl.float32)
    u = tl.load(up + offs, mask=m).to(tl.float32)
    tl.store(out + offs, (g * tl.sigmoid(g) * u).to(out.dtype.element_ty), mask=m)


@triton.jit
def int64_offsets_kernel(x, out, stride, n, BLOCK: tl.constexpr):
    # a stride passed as int64 (above 2**31) multiplies in 64 bits; a view reaches back into it
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    far = offs.to(tl.int64) * stride - (stride - 1) * offs
    tl.store(out + offs, tl.load(x + far, mask=m) * 2.0, mask=m)


def _gen():
    return torch.Generator().manual_seed(71)


def _data(g):
    d = {"logits": torch.randn(7, 50, generator=g) * 3, "target": torch.randint(0, 50, (7,), generator=g),
         "a": torch.randn(5, 77, generator=g), "b": torch.randn(5, 77, generator=g),
         "gn": torch.randn(2, 8, 3, 5, generator=g), "gw": torch.randn(8, generator=g), "gb": torch.randn(8, generator=g),
         "bn": torch.randn(3, 4, 6, 6, generator=g), "stats": torch.rand(4, 4, generator=g) + 0.5,
         "A": torch.randn(37, 53, generator=g), "xv": torch.randn(53, generator=g),
         "ids": torch.randint(0, 20, (13,), generator=g), "table": torch.randn(20, 9, generator=g),
         "src": torch.randn(13, 9, generator=g), "idx": torch.randint(0, 5, (13,), generator=g, dtype=torch.int32),
         "T": torch.randn(19, 45, generator=g), "mp": torch.randn(2, 3, 11, 8, generator=g),
         "sw": torch.randn(2, 333, generator=g)}
    return d


def run():
    d = _data(_gen())
    out = {}
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        tag = str(dt)[6:]
        loss = torch.empty(7)
        cross_entropy_kernel[(7,)](d["logits"].to(dt), d["target"], loss, 50, BLOCK=64)
        out[f"xent_{tag}"] = loss
        o = torch.empty(5, 77, dtype=dt)
        l2norm_kernel[(5,)](d["a"].to(dt), o, 77, BLOCK=128)
        out[f"l2norm_{tag}"] = o
        o = torch.empty(2, 333, dtype=dt)
        swiglu_kernel[(triton.cdiv(333, 128),)](d["sw"][0].to(dt), d["sw"][1].to(dt), o, 333, BLOCK=128)
        out[f"swiglu_{tag}"] = o[0]
    for bl in (16, 64):
        o = torch.empty(5)
        cosine_kernel[(5,)](d["a"], d["b"], o, 77, 1e-8, BLOCK=bl)
        out[f"cosine_{bl}"] = o
        o = torch.empty_like(d["bn"])
        m, v = d["stats"][0], d["stats"][1]
        batchnorm_eval_kernel[(12,)](d["bn"], m, v, d["stats"][2], d["stats"][3], o, 4, 36, 1e-5, BLOCK=bl)
        out[f"batchnorm_{bl}"] = o
        y = torch.empty(37)
        gemv_kernel[(triton.cdiv(37, bl),)](d["A"], d["xv"], y, 37, 53, BM=bl, BK=bl // 2)
        out[f"gemv_{bl}"] = y
        o = torch.empty(45, 19)
        transpose_kernel[(triton.cdiv(19, bl), triton.cdiv(45, bl))](d["T"], o, 19, 45, BM=bl, BN=bl)
        out[f"transpose_{bl}"] = o
    o = torch.empty_like(d["gn"])
    group_norm_kernel[(2,)](d["gn"], d["gw"], d["gb"], o, 8, 15, 1e-5, G=4, CPG=2, BHW=16)
    out["groupnorm"] = o
    o = torch.empty(13, 9)
    embedding_kernel[(13,)](d["ids"], d["table"], o, 13, 9, BD=16)
    out["embedding"] = o
    o = torch.zeros(5, 9)
    index_add_kernel[(13,)](d["src"], d["idx"], o, 13, 9, BD=16)
    out["index_add"] = o
    for k, s, p in ((3, 2, 1), (2, 2, 0)):
        oh, ow = (11 + 2 * p - k) // s + 1, (8 + 2 * p - k) // s + 1
        o = torch.empty(2, 3, oh, ow)
        maxpool_kernel[(6,)](d["mp"], o, 11, 8, oh, ow, K=k, S=s, P=p, BLOCK=64)
        out[f"maxpool_{k}_{s}_{p}"] = o
    o = torch.empty(50)
    int64_offsets_kernel[(1,)](d["sw"][0], o, 2 ** 33 + 1, 50, BLOCK=64)
    out["int64_offsets"] = o
    return out


def expected():
    d = _data(_gen())
    out = {}
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        tag = str(dt)[6:]
        out[f"xent_{tag}"] = F.cross_entropy(d["logits"].to(dt).float(), d["target"], reduction="none")
        if dt == torch.float32:
            out["l2norm_float32"] = F.normalize(d["a"], dim=1)
            out["swiglu_float32"] = F.silu(d["sw"][0]) * d["sw"][1]
    for bl in (16, 64):
        out[f"cosine_{bl}"] = F.cosine_similarity(d["a"], d["b"], dim=1)
        st = d["stats"]
        out[f"batchnorm_{bl}"] = F.relu(F.batch_norm(d["bn"], st[0], st[1], st[2], st[3], False, 0.0, 1e-5))
        out[f"gemv_{bl}"] = d["A"] @ d["xv"]
        out[f"transpose_{bl}"] = d["T"].t()
    x = d["gn"].reshape(2, 8, 15)
    out["groupnorm"] = F.group_norm(x, 4, d["gw"], d["gb"], 1e-5).reshape(2, 8, 3, 5)
    out["embedding"] = d["table"][d["ids"]]
    out["index_add"] = torch.zeros(5, 9).index_add(0, d["idx"].long(), d["src"])
    for k, s, p in ((3, 2, 1), (2, 2, 0)):
        out[f"maxpool_{k}_{s}_{p}"] = F.max_pool2d(d["mp"], k, s, p)
    out["int64_offsets"] = d["sw"][0][:50] * 2
    return out
