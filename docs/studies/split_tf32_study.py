#!/usr/bin/env python3
"""Is fp32 through tensor cores faster when the operands are split before the kernel?

A candidate must meet the verifier's fp32 tolerance (1e-4), which single-pass TF32 misses, so the
synthesizer's products use `tl.dot(..., input_precision="tf32x3")`: Triton splits each fp32
operand tile into a TF32 high part and a remainder inside the K loop and issues three TF32
products. On an H100 those kernels reached about a quarter of the TF32 peak (session 7's
GEMM and convolution rows in docs/PERFORMANCE.md). This study times, for a level-2 GEMM and
convolution at `--scale 4`:

  x3     the synthesizer's form: input_precision="tf32x3".
  split  every operand split once, by a small elementwise kernel, into hi = x rounded to TF32
         and lo = x - hi (exact in fp32); the K loop loads hi and lo tiles and issues the same
         three products (hi*hi + hi*lo + lo*hi) as plain "tf32" dots, so the operands reach the
         tensor cores the way a TF32 GEMM's do. The split costs one extra pass over the inputs
         (for the convolution it rides on the channels-last copy the kernel already makes).
  tf32   one TF32 product (the speed ceiling; it misses the tolerance).
  bf16x3 as split, but hi = x rounded to bfloat16 and lo = the rest rounded to bfloat16, stored
         as bfloat16 and multiplied as three bf16 dots: twice TF32's tensor-core rate and half
         the operand bytes, with 16 of fp32's 24 significant bits kept (2^-16 per product).

and eager PyTorch with torch's defaults (cuBLAS fp32 for the GEMM, cuDNN with TF32 for the
convolution). Each is checked against float64 at the verifier's tolerance (|d| <= 1e-4 + 1e-4
|ref|). Milliseconds by triton.testing.do_bench, best tiling per form. One JSON object per
line. Usage: split_tf32_study.py [--quick] [--conv-sweep] [--forms x3,split,tf32,bf16x3]
(--quick: tiny shapes, for TRITON_INTERPRET=1 on a CPU, where Triton's interpreter multiplies
bfloat16 tiles wrongly; the worker patches that, this script does not).
"""
import argparse
import json

import torch
import triton
import triton.language as tl


@triton.jit
def split_kernel(src, hi, lo, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    x = tl.load(src + offs, mask=ok, other=0.0)
    # round to nearest TF32 (10 mantissa bits): add half of the dropped part, then drop it
    bits = x.to(tl.uint32, bitcast=True)
    h = ((bits + 0x1000) & 0xFFFFE000).to(tl.float32, bitcast=True)
    tl.store(hi + offs, h, mask=ok)
    tl.store(lo + offs, x - h, mask=ok)


@triton.jit
def split_bf16_kernel(src, hi, lo, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    x = tl.load(src + offs, mask=ok, other=0.0)
    h = x.to(tl.bfloat16)
    tl.store(hi + offs, h, mask=ok)
    tl.store(lo + offs, (x - h.to(tl.float32)).to(tl.bfloat16), mask=ok)


def split(t, bf16=False):
    t = t.contiguous()
    n = t.numel()
    if bf16:
        hi = torch.empty_like(t, dtype=torch.bfloat16)
        lo = torch.empty_like(hi)
        split_bf16_kernel[(triton.cdiv(n, 1024),)](t, hi, lo, n, BLOCK=1024)
        return hi, lo
    hi, lo = torch.empty_like(t), torch.empty_like(t)
    split_kernel[(triton.cdiv(n, 1024),)](t, hi, lo, n, BLOCK=1024)
    return hi, lo


@triton.jit
def product(acc, a, b, a_lo_ptr, b_lo_ptr, a_ok, b_ok, FORM: tl.constexpr):
    """acc + a @ b in FORM: 0 tf32x3, 1 split (the lo tiles loaded beside a and b), 2 tf32,
    3 bf16x3 (split into bfloat16 hi and lo: three bf16 products)."""
    if FORM == 0:
        acc = tl.dot(a, b, acc, input_precision="tf32x3")
    elif FORM == 1 or FORM == 3:
        a_lo = tl.load(a_lo_ptr, mask=a_ok, other=0.0)
        b_lo = tl.load(b_lo_ptr, mask=b_ok, other=0.0)
        if FORM == 1:
            acc = tl.dot(a_lo, b, acc, input_precision="tf32")
            acc = tl.dot(a, b_lo, acc, input_precision="tf32")
            acc = tl.dot(a, b, acc, input_precision="tf32")
        else:
            acc = tl.dot(a_lo, b, acc)
            acc = tl.dot(a, b_lo, acc)
            acc = tl.dot(a, b, acc)
    else:
        acc = tl.dot(a, b, acc, input_precision="tf32")
    return acc


@triton.jit
def gemm_kernel(ah, al, bh, bl, bias, c, M, N, K, sam, sak, sbk, sbn,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr,
                FORM: tl.constexpr):
    # relu(A @ B + bias); FORM 0 = tf32x3, 1 = split, 2 = tf32
    pid = tl.program_id(0)
    num_m, num_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a_off = rm[:, None] * sam + rk[None, :] * sak
        b_off = rk[:, None] * sbk + rn[None, :] * sbn
        a_ok = (rm[:, None] < M) & (rk[None, :] < K)
        b_ok = (rk[:, None] < K) & (rn[None, :] < N)
        a = tl.load(ah + a_off, mask=a_ok, other=0.0)
        b = tl.load(bh + b_off, mask=b_ok, other=0.0)
        acc = product(acc, a, b, al + a_off, bl + b_off, a_ok, b_ok, FORM)
    acc += tl.load(bias + rn, mask=rn < N, other=0.0)[None, :]
    acc = tl.maximum(acc, 0.0)
    tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def to_channels_last(src, hi, lo, C, HW, BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr,
                     SPLIT: tl.constexpr):
    # (B, C, HW) -> (B, HW, C); with SPLIT the hi and lo parts, as split_kernel
    b = tl.program_id(2)
    rp = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    rc = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    ok = (rc[:, None] < C) & (rp[None, :] < HW)
    v = tl.load(src + b * C * HW + rc[:, None] * HW + rp[None, :], mask=ok)
    dst = (b * HW + rp[None, :]) * C + rc[:, None]
    if SPLIT == 2:
        h = v.to(tl.bfloat16)
        tl.store(hi + dst, h, mask=ok)
        tl.store(lo + dst, (v - h.to(tl.float32)).to(tl.bfloat16), mask=ok)
    elif SPLIT == 1:
        bits = v.to(tl.uint32, bitcast=True)
        h = ((bits + 0x1000) & 0xFFFFE000).to(tl.float32, bitcast=True)
        tl.store(hi + dst, h, mask=ok)
        tl.store(lo + dst, v - h, mask=ok)
    else:
        tl.store(hi + dst, v, mask=ok)


@triton.jit
def conv_kernel(xh, xl, wh, wl, cbias, bias, out, C_OUT, C_IN, OH, OW, H, W,
                KH: tl.constexpr, KW: tl.constexpr, ROWS: tl.constexpr, BW: tl.constexpr,
                BN: tl.constexpr, BK: tl.constexpr, FORM: tl.constexpr):
    # relu(conv(x, w) + cbias) + bias over channels-last copies (lower_conv_gemm_cl's form)
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    tiles_w = tl.cdiv(OW, BW)
    tiles_h = tl.cdiv(OH, ROWS)
    bi = pid_m // (tiles_w * tiles_h)
    th = (pid_m // tiles_w) % tiles_h
    r = tl.arange(0, ROWS * BW)
    ow = (pid_m % tiles_w) * BW + r % BW
    oh = th * ROWS + r // BW
    m_ok = (oh < OH) & (ow < OW)
    rn = pid_n * BN + tl.arange(0, BN)
    n_ok = rn < C_OUT
    CB = tl.cdiv(C_IN, BK)
    acc = tl.zeros((ROWS * BW, BN), dtype=tl.float32)
    for step in range(0, KH * KW * CB):
        tap = step // CB
        kh = tap // KW
        kw = tap % KW
        ih = oh + kh
        iw = ow + kw
        rk = (step % CB) * BK + tl.arange(0, BK)
        k_ok = rk < C_IN
        ok = m_ok & (ih < H) & (iw < W)
        a_off = ((bi * H + ih) * W + iw)[:, None] * C_IN + rk[None, :]
        a_ok = ok[:, None] & k_ok[None, :]
        b_off = (rn[None, :] * (KH * KW) + kh * KW + kw) * C_IN + rk[:, None]
        b_ok = k_ok[:, None] & n_ok[None, :]
        a = tl.load(xh + a_off, mask=a_ok, other=0.0)
        b = tl.load(wh + b_off, mask=b_ok, other=0.0)
        acc = product(acc, a, b, xl + a_off, wl + b_off, a_ok, b_ok, FORM)
    mask = m_ok[:, None] & n_ok[None, :]
    v = acc + tl.load(cbias + rn, mask=n_ok, other=0.0)[None, :]
    v = tl.maximum(v, 0.0) + tl.load(bias + rn, mask=n_ok, other=0.0)[None, :]
    o = ((bi * C_OUT + rn[None, :]) * OH + oh[:, None]) * OW + ow[:, None]
    tl.store(out + o, v, mask=mask)


FORMS = {"x3": 0, "split": 1, "tf32": 2, "bf16x3": 3}
FORMS_RUN = list(FORMS)


def run_gemm(x, w, b, tile, form):
    bm, bn, bk, warps, stages = tile
    M, K = x.shape
    N = w.shape[0]
    if form in ("split", "bf16x3"):
        (xh, xl), (wh, wl) = split(x, form == "bf16x3"), split(w, form == "bf16x3")
    else:
        xh = xl = x
        wh = wl = w
    c = torch.empty((M, N), device=x.device, dtype=torch.float32)
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    # B = W^T: B[k, n] = W[n, k]
    gemm_kernel[grid](xh, xl, wh, wl, b, c, M, N, K, K, 1, 1, K, BM=bm, BN=bn, BK=bk,
                      GROUP_M=8, FORM=FORMS[form], num_warps=warps, num_stages=stages)
    return c


def channels_last(t, do_split):
    """do_split: 0 a plain copy, 1 TF32 hi and lo (fp32), 2 bfloat16 hi and lo."""
    B, C = t.shape[:2]
    HW = t.shape[2] * t.shape[3]
    dtype = torch.bfloat16 if do_split == 2 else t.dtype
    hi = torch.empty((B, t.shape[2], t.shape[3], C), device=t.device, dtype=dtype)
    lo = torch.empty_like(hi) if do_split else hi
    to_channels_last[(triton.cdiv(HW, 64), triton.cdiv(C, 32), B)](
        t, hi, lo, C, HW, BLOCK_C=32, BLOCK_P=64, SPLIT=do_split)
    return hi, lo


def run_conv(x, w, cbias, bias, tile, form):
    rows_bw, bn, bk, warps, stages = tile
    B, C_IN, H, W = x.shape
    C_OUT, _, KH, KW = w.shape
    OH, OW = H - KH + 1, W - KW + 1
    mode = {"split": 1, "bf16x3": 2}.get(form, 0)
    xh, xl = channels_last(x, mode)
    wh, wl = channels_last(w, mode)
    bw = min(max(triton.next_power_of_2(OW), 16), 64, rows_bw)
    rows = rows_bw // bw
    bk = min(bk, max(16, triton.next_power_of_2(C_IN)))
    out = torch.empty((B, C_OUT, OH, OW), device=x.device, dtype=torch.float32)
    grid = (B * triton.cdiv(OH, rows) * triton.cdiv(OW, bw), triton.cdiv(C_OUT, bn))
    conv_kernel[grid](xh, xl, wh, wl, cbias, bias, out, C_OUT, C_IN, OH, OW, H, W, KH=KH, KW=KW,
                      ROWS=rows, BW=bw, BN=bn, BK=bk, FORM=FORMS[form], num_warps=warps,
                      num_stages=stages)
    return out


def max_excess(y, ref):
    """How far beyond the verifier's tolerance the worst element is (<= 0: within)."""
    d = (y.double() - ref).abs() - (1e-4 + 1e-4 * ref.abs())
    return float(d.max())


def study(name, eager, exact, run, tiles, bench):
    ref = exact()
    row = {"case": name, "eager_ms": bench(eager), "eager_excess": max_excess(eager(), ref)}
    print(json.dumps(row), flush=True)
    for form in FORMS_RUN:
        best = None
        for tile in tiles:
            try:
                y = run(tile, form)
                ms = bench(lambda tile=tile, form=form: run(tile, form))
            except Exception as exc:  # a tiling that does not fit this GPU's shared memory
                print(json.dumps({"case": name, "form": form, "tile": tile,
                                  "error": f"{type(exc).__name__}: {str(exc)[:200]}"}), flush=True)
                continue
            r = {"case": name, "form": form, "tile": tile, "ms": ms,
                 "excess": max_excess(y, ref)}
            print(json.dumps(r), flush=True)
            if best is None or ms < best["ms"]:
                best = r
        if best:
            print(json.dumps({"case": name, "form": form, "best": best["tile"],
                              "ms": best["ms"], "vs_eager": row["eager_ms"] / best["ms"],
                              "within_tolerance": best["excess"] <= 0}), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--conv-sweep", action="store_true",
                    help="only convolutions: more tilings, 2/3's shape and 2/8's (8 channels)")
    ap.add_argument("--forms", default=",".join(FORMS),
                    help="comma-separated forms to time (default: all)")
    args = ap.parse_args()
    global FORMS_RUN
    FORMS_RUN = [f for f in args.forms.split(",") if f]
    dev = "cpu" if args.quick else "cuda"
    torch.manual_seed(0)
    if args.quick:
        gm, gk, gn = 32, 64, 32
        conv_shape = (2, 16, 10, 10, 32)
        gemm_tiles = [(32, 32, 16, 4, 2)]
        conv_tiles = [(32, 32, 16, 4, 2)]
        bench = lambda fn: 1.0  # noqa: E731
    else:
        gm, gk, gn = 1024, 4096, 2048  # level-2 1_Linear_BiasAdd_ReLU at --scale 4
        conv_shape = (8, 64, 256, 256, 128)  # 3_Conv2d_ReLU_BiasAdd at --scale 4
        gemm_tiles = [(128, 128, 32, 8, 3), (128, 64, 32, 4, 4), (128, 256, 32, 8, 3),
                      (128, 128, 64, 8, 3), (128, 256, 64, 8, 3),
                      (64, 128, 32, 4, 4), (128, 128, 16, 8, 4)]
        conv_tiles = [(128, 128, 32, 8, 3), (64, 128, 32, 4, 4), (128, 64, 32, 4, 3),
                      (128, 128, 64, 8, 2), (128, 128, 16, 8, 4)]
        bench = triton.testing.do_bench

    if args.conv_sweep:
        conv_tiles = [(128, 128, 32, 8, 3), (128, 128, 32, 8, 2), (64, 128, 32, 4, 4),
                      (64, 128, 32, 4, 3), (128, 64, 32, 4, 4), (128, 64, 32, 4, 3),
                      (64, 64, 32, 4, 4), (128, 128, 64, 8, 2), (128, 128, 64, 8, 3),
                      (128, 128, 64, 4, 3), (64, 128, 64, 4, 4), (128, 256, 64, 8, 3)]
        for shape in ((8, 64, 256, 256, 128), (128, 8, 128, 128, 256)):
            conv_case(shape, conv_tiles, bench, dev)
        return
    lin = torch.nn.Linear(gk, gn).to(dev)
    x = torch.randn(gm, gk, device=dev)
    w, b = lin.weight.detach(), lin.bias.detach()
    study("gemm", lambda: torch.relu(lin(x)),
          lambda: torch.relu(x.double() @ w.double().T + b.double()),
          lambda tile, form: run_gemm(x, w, b, tile, form), gemm_tiles, bench)

    conv_case(conv_shape, conv_tiles, bench, dev)


def conv_case(shape, tiles, bench, dev):
    B, C_IN, H, W, C_OUT = shape
    conv = torch.nn.Conv2d(C_IN, C_OUT, 3).to(dev)
    bias = 0.1 * torch.randn(C_OUT, device=dev)
    xc = torch.randn(B, C_IN, H, W, device=dev)
    cw, cb = conv.weight.detach(), conv.bias.detach()

    def exact():
        with torch.no_grad():
            return torch.relu(torch.nn.functional.conv2d(xc.double(), cw.double(), cb.double())) \
                + bias.double().view(1, -1, 1, 1)

    study(f"conv {shape}", lambda: torch.relu(conv(xc)) + bias.view(1, -1, 1, 1), exact,
          lambda tile, form: run_conv(xc, cw, cb, bias, tile, form), tiles, bench)

if __name__ == "__main__":
    with torch.no_grad():
        main()
