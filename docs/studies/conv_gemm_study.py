#!/usr/bin/env python3
"""Which implicit-GEMM form should the synthesizer write for a convolution on an NVIDIA GPU?

Times, on the bundled level-2 convolution shapes (`--scale 4`, as the GPU bench runs them), the
form lower_conv_gemm.cpp writes (one K loop over input channels x taps, each K index split by %
and //; first on cuda until 2026-11-27) against two alternatives, each with the fused ReLU +
bias epilogue of level 2's 3_Conv2d_ReLU_BiasAdd, and eager PyTorch (cuDNN, TF32 allowed as
torch's defaults have it) on the same module:

  flat   the old form: rows are flattened output positions, K = C_in x KH x KW with % and //.
  taps   NCHW, rows are a tile of ROWS output rows x BLOCK_OW columns (a constexpr power of two,
         so Triton's axis analysis sees the columns as contiguous), one K loop over (tap, channel
         block) with the tap's offsets computed once per step.
  nhwc   the input and weight repacked channels-last by two small Triton kernels inside the
         timed forward, then the same tap loop with K-contiguous (K-major) operands, the layout
         tensor cores read directly (what lower_conv_gemm_cl.cpp writes).

Each is checked against a float64 convolution at the verifier's fp32 tolerance (1e-4). Prints one
JSON object per line. Usage: conv_gemm_study.py [--quick] (quick: tiny shapes, for
TRITON_INTERPRET=1 on a CPU).
"""
import argparse
import functools
import json
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def flat_kernel(x, w, cbias, bias, out, M, C_OUT, C_IN, OH, OW, H, W,
                xs0, xs1, xs2, xs3, ws0, ws1, ws2, ws3,
                KH: tl.constexpr, KW: tl.constexpr, PH: tl.constexpr, PW: tl.constexpr,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                PREC: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ow = rm % OW
    rem = rm // OW
    oh = rem % OH
    bi = rem // OH
    KTOT = C_IN * KH * KW
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, KTOT, BLOCK_K):
        kk = k0 + tl.arange(0, BLOCK_K)
        kw = kk % KW
        rk = kk // KW
        kh = rk % KH
        ci = rk // KH
        ih = oh[:, None] - PH + kh[None, :]
        iw = ow[:, None] - PW + kw[None, :]
        a = tl.load(x + bi[:, None] * xs0 + ci[None, :] * xs1 + ih * xs2 + iw * xs3,
                    mask=(rm[:, None] < M) & (kk[None, :] < KTOT) & (ih >= 0) & (ih < H)
                    & (iw >= 0) & (iw < W), other=0.0)
        b = tl.load(w + rn[None, :] * ws0 + ci[:, None] * ws1 + kh[:, None] * ws2
                    + kw[:, None] * ws3, mask=(kk[:, None] < KTOT) & (rn[None, :] < C_OUT),
                    other=0.0)
        acc += tl.dot(a, b, input_precision=PREC)
    acc += tl.load(cbias + rn, mask=rn < C_OUT, other=0.0)[None, :]
    y = tl.maximum(acc, 0.0) + tl.load(bias + rn, mask=rn < C_OUT, other=0.0)[None, :]
    mask = (rm[:, None] < M) & (rn[None, :] < C_OUT)
    tl.store(out + bi[:, None] * (C_OUT * OH * OW) + rn[None, :] * (OH * OW)
             + oh[:, None] * OW + ow[:, None], y, mask=mask)


@triton.jit
def taps_kernel(x, w, cbias, bias, out, B, C_OUT, C_IN, OH, OW, H, W,
                xs0, xs1, xs2, xs3, ws0, ws1, ws2, ws3,
                KH: tl.constexpr, KW: tl.constexpr, PH: tl.constexpr, PW: tl.constexpr,
                ROWS: tl.constexpr, BLOCK_OW: tl.constexpr, BLOCK_N: tl.constexpr,
                BLOCK_K: tl.constexpr, PREC: tl.constexpr, CHANNELS_LAST: tl.constexpr):
    BLOCK_M: tl.constexpr = ROWS * BLOCK_OW
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    tiles_w = tl.cdiv(OW, BLOCK_OW)
    tiles_h = tl.cdiv(OH, ROWS)
    tw = pid_m % tiles_w
    t = pid_m // tiles_w
    th = t % tiles_h
    bi = t // tiles_h
    r = tl.arange(0, BLOCK_M)
    oh = th * ROWS + r // BLOCK_OW
    ow = tw * BLOCK_OW + r % BLOCK_OW
    m_ok = (oh < OH) & (ow < OW)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n_ok = rn < C_OUT
    CB = tl.cdiv(C_IN, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for step in range(0, KH * KW * CB):
        tap = step // CB
        c0 = (step % CB) * BLOCK_K
        kh = tap // KW
        kw = tap % KW
        ih = oh - PH + kh
        iw = ow - PW + kw
        ok = m_ok & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        rk = c0 + tl.arange(0, BLOCK_K)
        k_ok = rk < C_IN
        a = tl.load(x + bi * xs0 + ih[:, None] * xs2 + iw[:, None] * xs3 + rk[None, :] * xs1,
                    mask=ok[:, None] & k_ok[None, :], other=0.0)
        if CHANNELS_LAST:  # w is (C_out, KH, KW, C_in)
            b = tl.load(w + rn[None, :] * ws0 + kh * ws1 + kw * ws2 + rk[:, None] * ws3,
                        mask=k_ok[:, None] & n_ok[None, :], other=0.0)
        else:
            b = tl.load(w + rn[None, :] * ws0 + rk[:, None] * ws1 + kh * ws2 + kw * ws3,
                        mask=k_ok[:, None] & n_ok[None, :], other=0.0)
        acc += tl.dot(a, b, input_precision=PREC)
    acc += tl.load(cbias + rn, mask=n_ok, other=0.0)[None, :]
    y = tl.maximum(acc, 0.0) + tl.load(bias + rn, mask=n_ok, other=0.0)[None, :]
    mask = m_ok[:, None] & n_ok[None, :]
    tl.store(out + bi * (C_OUT * OH * OW) + rn[None, :] * (OH * OW) + oh[:, None] * OW
             + ow[:, None], y, mask=mask)


@triton.jit
def to_channels_last(src, dst, C, HW, BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    """(B, C, HW) -> (B, HW, C): a tile of channels x positions read along positions, written
    along channels."""
    b = tl.program_id(2)
    rc = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    rp = tl.program_id(1) * BLOCK_P + tl.arange(0, BLOCK_P)
    mask = (rc[:, None] < C) & (rp[None, :] < HW)
    v = tl.load(src + b * C * HW + rc[:, None] * HW + rp[None, :], mask=mask)
    tl.store(dst + b * C * HW + rp[None, :] * C + rc[:, None], v, mask=mask)


def pow2_at_most(n, cap):
    p = 1
    while p * 2 <= min(n, cap):
        p *= 2
    return p


def run_flat(x, w, cbias, bias, tile, prec, padded):
    bm, bn, bk, warps, stages = tile
    B, C, H, W = x.shape
    CO, _, KH, KW = w.shape
    PH, PW = (KH // 2, KW // 2) if padded else (0, 0)
    OH, OW = H + 2 * PH - KH + 1, W + 2 * PW - KW + 1
    out = torch.empty(B, CO, OH, OW, device=x.device)
    M = B * OH * OW
    grid = (triton.cdiv(M, bm), triton.cdiv(CO, bn))
    flat_kernel[grid](x, w, cbias, bias, out, M, CO, C, OH, OW, H, W, *x.stride(), *w.stride(),
                      KH=KH, KW=KW, PH=PH, PW=PW, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, PREC=prec,
                      num_warps=warps, num_stages=stages)
    return out


def run_taps(x, w, cbias, bias, tile, prec, padded, nhwc):
    bm, bn, bk, warps, stages = tile
    B, C, H, W = x.shape
    CO, _, KH, KW = w.shape
    PH, PW = (KH // 2, KW // 2) if padded else (0, 0)
    OH, OW = H + 2 * PH - KH + 1, W + 2 * PW - KW + 1
    bow = pow2_at_most(triton.next_power_of_2(OW), bm)
    rows = bm // bow
    if nhwc:
        xl = torch.empty(B, H, W, C, device=x.device)
        to_channels_last[(triton.cdiv(C, 32), triton.cdiv(H * W, 64), B)](
            x, xl, C, H * W, BLOCK_C=32, BLOCK_P=64)
        wl = torch.empty(CO, KH, KW, C, device=x.device)
        to_channels_last[(triton.cdiv(C, 32), triton.cdiv(KH * KW, 64), CO)](
            w, wl, C, KH * KW, BLOCK_C=32, BLOCK_P=64)
        xs = (xl.stride(0), xl.stride(3), xl.stride(1), xl.stride(2))  # as (b, c, h, w)
        x_arg, w_arg, ws = xl, wl, wl.stride()
    else:
        xs, x_arg, w_arg, ws = x.stride(), x, w, w.stride()
    out = torch.empty(B, CO, OH, OW, device=x.device)
    grid = (B * triton.cdiv(OH, rows) * triton.cdiv(OW, bow), triton.cdiv(CO, bn))
    taps_kernel[grid](x_arg, w_arg, cbias, bias, out, B, CO, C, OH, OW, H, W, *xs, *ws,
                      KH=KH, KW=KW, PH=PH, PW=PW, ROWS=rows, BLOCK_OW=bow, BLOCK_N=bn, BLOCK_K=bk,
                      PREC=prec, CHANNELS_LAST=nhwc, num_warps=warps, num_stages=stages)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--forms", default="flat,taps,nhwc")
    ap.add_argument("--precs", default="tf32x3,tf32")
    ap.add_argument("--tiles", default="", help="BMxBNxBKxWARPSxSTAGES,... (default: a menu)")
    ap.add_argument("--shapes", default="", help="substrings of shape names to keep")
    args = ap.parse_args()
    dev = "cuda" if torch.cuda.is_available() and not args.quick else "cpu"
    if args.quick:
        shapes = [("tiny", 2, 5, 9, 11, 6, 3, False), ("tiny padded", 2, 5, 7, 6, 6, 3, True)]
        tiles = [(16, 16, 16, 4, 1), (32, 16, 16, 4, 1)]
        precs = ["ieee"]
    else:
        # name, batch, C_in, H, W, C_out, k, padded: the level-2 tasks at --scale 4 (sizes above 8
        # times 4, so a batch of 8 stays 8), and 2/3 at its own size
        shapes = [("2/3 scale1", 8, 16, 64, 64, 32, 3, False),
                  ("2/3 scale4", 8, 64, 256, 256, 128, 3, False),
                  ("2/4 scale4", 8, 64, 192, 192, 128, 3, True),
                  ("2/8 scale4", 128, 32, 128, 128, 256, 3, False),
                  ("2/19 scale4", 64, 128, 1, 4096, 256, (1, 5), True)]
        tiles = [(128, 128, 32, 8, 3), (128, 64, 32, 4, 3), (64, 64, 32, 4, 4),
                 (128, 128, 16, 8, 4), (256, 128, 32, 8, 3)]
        precs = args.precs.split(",")
        if args.tiles:
            tiles = [tuple(int(v) for v in t.split("x")) for t in args.tiles.split(",")]
        if args.shapes:
            shapes = [s for s in shapes if any(k in s[0] for k in args.shapes.split(","))]
    for name, B, C, H, W, CO, k, padded in shapes:
        torch.manual_seed(0)
        kk = k if isinstance(k, tuple) else (k, k)
        conv = torch.nn.Conv2d(C, CO, kk, padding=(kk[0] // 2, kk[1] // 2) if padded else 0).to(dev)
        bias = (0.1 * torch.randn(CO)).to(dev)
        x = torch.randn(B, C, H, W, device=dev)
        w = conv.weight.detach().contiguous()
        cbias = conv.bias.detach().contiguous()
        with torch.no_grad():
            exact = torch.relu(torch.nn.functional.conv2d(
                x.double(), w.double(), conv.bias.double(), padding=conv.padding)) \
                + bias.double()[:, None, None]

            # eager and err are called only within this iteration
            def eager():
                return torch.relu(conv(x)) + bias[:, None, None]  # noqa: B023

            def err(y):
                d = (y.double() - exact).abs() - 1e-4 * exact.abs()  # noqa: B023
                return float(d.max())

            row = {"shape": name, "form": "eager", "err_over_rtol": err(eager())}
            if dev == "cuda":
                row["ms"] = triton.testing.do_bench(eager)
                gflop = 2.0 * exact.numel() * C * kk[0] * kk[1] / 1e9
                row["gflop"] = gflop
                conv_only = lambda conv=conv, x=x: conv(x)  # noqa: E731
                row["conv_ms"] = triton.testing.do_bench(conv_only)
            print(json.dumps(row), flush=True)
            for prec in precs:
                for tile in tiles:
                    for form in args.forms.split(","):
                        if form == "flat":
                            fn = functools.partial(run_flat, x, w, cbias, bias, tile, prec, padded)
                        else:
                            fn = functools.partial(run_taps, x, w, cbias, bias, tile, prec,
                                                   padded, form == "nhwc")
                        row = {"shape": name, "form": form, "prec": prec, "tile": tile}
                        try:
                            row["err_over_rtol"] = err(fn())
                            if dev == "cuda":
                                row["ms"] = triton.testing.do_bench(fn)
                        except Exception as e:  # noqa: BLE001 - a study: report and go on
                            row["error"] = f"{type(e).__name__}: {str(e)[:300]}"
                        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
