"""Matrix products with K loops and epilogues, batched (3-D) tl.dot, split-K with atomics, and
convolution and pooling kernels (direct conv1d, conv2d as an implicit GEMM through tl.dot,
depthwise conv2d, average and global pooling) at odd shapes and two tilings each, in fp32 and
fp16, against the Triton interpreter and PyTorch (test_tcl_differential.py)."""

import torch
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def linear_kernel(x, w, b, res, out, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                  ACT: tl.constexpr):
    # out = act(x @ w^T + b) + res, w stored [N, K] as nn.Linear's weight
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(x + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        bt = tl.load(w + rn[None, :] * K + rk[:, None], mask=(rn[None, :] < N) & (rk[:, None] < K), other=0.0)
        acc = tl.dot(a, bt, acc)
    acc += tl.load(b + rn, mask=rn < N, other=0.0)[None, :].to(tl.float32)
    if ACT == "gelu":
        acc = 0.5 * acc * (1.0 + tl.erf(acc * 0.7071067811865476))
    elif ACT == "leaky":
        acc = tl.where(acc > 0, acc, 0.01 * acc)
    m = (rm[:, None] < M) & (rn[None, :] < N)
    acc += tl.load(res + rm[:, None] * N + rn[None, :], mask=m, other=0.0).to(tl.float32)
    tl.store(out + rm[:, None] * N + rn[None, :], acc.to(out.dtype.element_ty), mask=m)


@triton.jit
def bmm_kernel(a, b, c, M, N, K, BB: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # BB batches per program through one 3-D tl.dot per K step
    pb = tl.program_id(0)
    ib = pb * BB + tl.arange(0, BB)
    im = tl.arange(0, BM)
    inn = tl.arange(0, BN)
    acc = tl.zeros((BB, BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ik = k0 + tl.arange(0, BK)
        av = tl.load(a + ib[:, None, None] * M * K + im[None, :, None] * K + ik[None, None, :],
                     mask=(im[None, :, None] < M) & (ik[None, None, :] < K), other=0.0)
        bv = tl.load(b + ib[:, None, None] * K * N + ik[None, :, None] * N + inn[None, None, :],
                     mask=(ik[None, :, None] < K) & (inn[None, None, :] < N), other=0.0)
        acc += tl.dot(av, bv)
    tl.store(c + ib[:, None, None] * M * N + im[None, :, None] * N + inn[None, None, :], acc,
             mask=(im[None, :, None] < M) & (inn[None, None, :] < N))


@triton.jit
def splitk_kernel(a, b, c, M, N, K, K_PER: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                  BK: tl.constexpr):
    # each program multiplies one K slice and adds it into c with atomic_add
    pk = tl.program_id(0)
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(pk * K_PER, pk * K_PER + K_PER, BK):
        rk = k0 + tl.arange(0, BK)
        av = tl.load(a + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        bv = tl.load(b + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(av, bv)
    tl.atomic_add(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def conv1d_kernel(x, w, b, out, C_IN, L, C_OUT, L_OUT, K: tl.constexpr, PAD: tl.constexpr,
                  BLOCK: tl.constexpr):
    # one (batch, out channel) row of output positions per program
    pid = tl.program_id(0)
    bi = pid // C_OUT
    co = pid % C_OUT
    lo = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for ci in range(C_IN):
        for t in tl.static_range(K):
            li = lo - PAD + t
            v = tl.load(x + (bi * C_IN + ci) * L + li, mask=(li >= 0) & (li < L) & (lo < L_OUT), other=0.0)
            acc += v * tl.load(w + (co * C_IN + ci) * K + t)
    acc += tl.load(b + co)
    tl.store(out + pid * L_OUT + lo, acc, mask=lo < L_OUT)


@triton.jit
def conv2d_gemm_kernel(x, w, out, C, H, W, OC, OH, OW, KH: tl.constexpr, KW: tl.constexpr,
                       BP: tl.constexpr, BO: tl.constexpr, BK: tl.constexpr):
    # implicit GEMM: rows = output pixels of one image, cols = out channels, K = C*KH*KW
    n = tl.program_id(0)
    pp = tl.program_id(1) * BP + tl.arange(0, BP)
    oc = tl.arange(0, BO)
    oh = pp // OW
    ow = pp % OW
    KTOT = C * KH * KW
    acc = tl.zeros((BP, BO), dtype=tl.float32)
    for k0 in range(0, KTOT, BK):
        kk = k0 + tl.arange(0, BK)
        ci = kk // (KH * KW)
        kh = (kk // KW) % KH
        kw = kk % KW
        a = tl.load(x + ((n * C + ci[None, :]) * H + oh[:, None] + kh[None, :]) * W + ow[:, None] + kw[None, :],
                    mask=(pp[:, None] < OH * OW) & (kk[None, :] < KTOT), other=0.0)
        bw = tl.load(w + oc[None, :] * KTOT + kk[:, None], mask=(oc[None, :] < OC) & (kk[:, None] < KTOT), other=0.0)
        acc = tl.dot(a, bw, acc)
    tl.store(out + (n * OC + oc[None, :]) * OH * OW + pp[:, None], acc,
             mask=(pp[:, None] < OH * OW) & (oc[None, :] < OC))


@triton.jit
def depthwise_kernel(x, w, out, C, H, W, BLOCK: tl.constexpr):
    # 3x3, padding 1, one channel of one image per program
    pid = tl.program_id(0)
    c = pid % C
    p = tl.arange(0, BLOCK)
    h = p // W
    wc = p % W
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for kh in tl.static_range(3):
        for kw in tl.static_range(3):
            ih = h + kh - 1
            iw = wc + kw - 1
            m = (p < H * W) & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
            acc += tl.load(x + pid * H * W + ih * W + iw, mask=m, other=0.0).to(tl.float32) * tl.load(w + c * 9 + kh * 3 + kw)
    tl.store(out + pid * H * W + p, acc.to(out.dtype.element_ty), mask=p < H * W)


@triton.jit
def avgpool_kernel(x, out, H, W, OH, OW, K: tl.constexpr, S: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    p = tl.arange(0, BLOCK)
    oh = p // OW
    ow = p % OW
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for kh in tl.static_range(K):
        for kw in tl.static_range(K):
            acc += tl.load(x + pid * H * W + (oh * S + kh) * W + ow * S + kw, mask=p < OH * OW, other=0.0)
    tl.store(out + pid * OH * OW + p, acc / (K * K), mask=p < OH * OW)


@triton.jit
def global_avg_kernel(x, out, HW, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(0, HW, BLOCK):
        i = s + tl.arange(0, BLOCK)
        acc += tl.load(x + pid * HW + i, mask=i < HW, other=0.0)
    tl.store(out + pid, tl.sum(acc, 0) / HW)


def _gen():
    return torch.Generator().manual_seed(31)


def _data(g):
    d = {}
    d["lin"] = (torch.randn(19, 37, generator=g), torch.randn(23, 37, generator=g) * 0.2,
                torch.randn(23, generator=g), torch.randn(19, 23, generator=g))
    d["bmm"] = (torch.randn(4, 9, 21, generator=g), torch.randn(4, 21, 13, generator=g))
    d["splitk"] = (torch.randint(-3, 4, (12, 64), generator=g).float(),
                   torch.randint(-3, 4, (64, 10), generator=g).float())
    d["conv1d"] = (torch.randn(2, 3, 29, generator=g), torch.randn(5, 3, 3, generator=g),
                   torch.randn(5, generator=g))
    d["conv2d"] = (torch.randn(2, 3, 9, 11, generator=g), torch.randn(6, 3, 3, 2, generator=g))
    d["dw"] = (torch.randn(2, 4, 7, 5, generator=g), torch.randn(4, 1, 3, 3, generator=g))
    d["pool"] = torch.randn(2, 3, 10, 9, generator=g)
    return d


def run():
    d = _data(_gen())
    out = {}
    x, w, b, res = d["lin"]
    M, K = x.shape
    N = w.shape[0]
    for dt in (torch.float32, torch.float16):
        for act in ("gelu", "leaky"):
            for bm, bn, bk in ((16, 16, 16), (32, 32, 8)):
                o = torch.empty(M, N, dtype=dt)
                linear_kernel[(triton.cdiv(M, bm), triton.cdiv(N, bn))](
                    x.to(dt), w.to(dt), b.to(dt), res.to(dt), o, M, N, K, BM=bm, BN=bn, BK=bk, ACT=act)
                out[f"linear_{act}_{str(dt)[6:]}_{bm}_{bk}"] = o
    a, bb = d["bmm"]
    for BB, BK in ((1, 8), (2, 32)):
        c = torch.empty(4, 9, 13)
        bmm_kernel[(4 // BB,)](a, bb, c, 9, 13, 21, BB=BB, BM=16, BN=16, BK=BK)
        out[f"bmm_{BB}_{BK}"] = c
    a, bb = d["splitk"]
    for kper in (16, 32):
        c = torch.zeros(12, 10)
        splitk_kernel[(64 // kper,)](a, bb, c, 12, 10, 64, K_PER=kper, BM=16, BN=16, BK=16)
        out[f"splitk_{kper}"] = c
    xx, ww, bias = d["conv1d"]
    for pad in (0, 1):
        lout = 29 + 2 * pad - 3 + 1
        o = torch.empty(2, 5, lout)
        conv1d_kernel[(2 * 5,)](xx, ww, bias, o, 3, 29, 5, lout, K=3, PAD=pad, BLOCK=32)
        out[f"conv1d_{pad}"] = o
    xx, ww = d["conv2d"]
    OH, OW = 9 - 3 + 1, 11 - 2 + 1
    for bp, bk in ((16, 8), (64, 32)):
        o = torch.empty(2, 6, OH, OW)
        conv2d_gemm_kernel[(2, triton.cdiv(OH * OW, bp))](xx, ww, o, 3, 9, 11, 6, OH, OW, KH=3, KW=2,
                                                           BP=bp, BO=8, BK=bk)
        out[f"conv2d_{bp}_{bk}"] = o
    xx, ww = d["dw"]
    for dt in (torch.float32, torch.float16):
        o = torch.empty(2, 4, 7, 5, dtype=dt)
        depthwise_kernel[(8,)](xx.to(dt), ww, o, 4, 7, 5, BLOCK=64)
        out[f"depthwise_{str(dt)[6:]}"] = o
    xx = d["pool"]
    for k, s in ((2, 2), (3, 1)):
        oh, ow = (10 - k) // s + 1, (9 - k) // s + 1
        o = torch.empty(2, 3, oh, ow)
        avgpool_kernel[(6,)](xx, o, 10, 9, oh, ow, K=k, S=s, BLOCK=128)
        out[f"avgpool_{k}_{s}"] = o
    for bl in (16, 128):
        o = torch.empty(6)
        global_avg_kernel[(6,)](xx, o, 90, BLOCK=bl)
        out[f"gap_{bl}"] = o
    return out


def expected():
    d = _data(_gen())
    out = {}
    x, w, b, res = d["lin"]
    y = x @ w.t() + b
    for act, ref in (("gelu", F.gelu(y) + res), ("leaky", F.leaky_relu(y, 0.01) + res)):
        for bm, bk in ((16, 16), (32, 8)):
            out[f"linear_{act}_float32_{bm}_{bk}"] = ref
    a, bb = d["bmm"]
    for BB, BK in ((1, 8), (2, 32)):
        out[f"bmm_{BB}_{BK}"] = a @ bb
    a, bb = d["splitk"]
    for kper in (16, 32):
        out[f"splitk_{kper}"] = a @ bb
    xx, ww, bias = d["conv1d"]
    for pad in (0, 1):
        out[f"conv1d_{pad}"] = F.conv1d(xx, ww, bias, padding=pad)
    xx, ww = d["conv2d"]
    for bp, bk in ((16, 8), (64, 32)):
        out[f"conv2d_{bp}_{bk}"] = F.conv2d(xx, ww)
    xx, ww = d["dw"]
    out["depthwise_float32"] = F.conv2d(xx, ww, padding=1, groups=4)
    xx = d["pool"]
    for k, s in ((2, 2), (3, 1)):
        out[f"avgpool_{k}_{s}"] = F.avg_pool2d(xx, k, s)
    for bl in (16, 128):
        out[f"gap_{bl}"] = xx.mean((2, 3)).reshape(-1)
    return out
