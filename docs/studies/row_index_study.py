#!/usr/bin/env python3
"""Does a row kernel's per-element index arithmetic cost more than its memory traffic?

The synthesizer's row programs over several dims (a norm over (h, w), a group's channels and
positions) found each element through divisions and remainders by runtime extents. This times
the statistics pass of 2/8's group norm at --scale 4 (128 x 256 x 126 x 126 fp32, 8 groups: one
row per (batch, group) of 32 x 126 x 126, cut into parts of SPAN columns per program, as
lower_row.cpp's looped form does) both ways: coordinates by division, and `cols` times the last
stride over one run of addresses (what lower_row.cpp now does where a view allows). Prints
milliseconds (triton.testing.do_bench) and the bandwidth reached. Needs an NVIDIA GPU.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def stats(p, out, R, cs2, cs3, s1, s2, s3, SPLITS, SPAN, FLAT: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0) // SPLITS
    start = (tl.program_id(0) % SPLITS) * SPAN
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    acc2 = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, SPAN, BLOCK):
        cols = start + c0 + tl.arange(0, BLOCK)
        m = cols < R
        if FLAT:
            off = cols * s3
        else:
            k3 = cols % cs3
            rem = cols // cs3
            k2 = rem % cs2
            k1 = rem // cs2
            off = k1 * s1 + k2 * s2 + k3 * s3
        x = tl.load(p + row * R + off, mask=m, other=0.0)
        acc += x
        acc2 += x * x
    tl.store(out + tl.program_id(0) * 2, tl.sum(acc, 0))
    tl.store(out + tl.program_id(0) * 2 + 1, tl.sum(acc2, 0))


def main():
    x = torch.randn(128, 256, 126, 126, device="cuda")
    R = 32 * 126 * 126
    rows = 128 * 8
    splits = 4
    span = triton.cdiv(triton.cdiv(R, splits), 2048) * 2048
    out = torch.empty(rows * splits * 2, device="cuda")
    for flat in (False, True):
        for block, warps in ((2048, 4), (2048, 8), (4096, 8)):
            def launch(flat=flat, block=block, warps=warps):
                stats[(rows * splits,)](x, out, R, 126, 126, x.stride(1), x.stride(2),
                                        x.stride(3), splits, span, FLAT=flat, BLOCK=block,
                                        num_warps=warps)

            ms = triton.testing.do_bench(launch)
            tbs = x.numel() * 4 / ms / 1e9
            print(f"flat={flat} block={block} warps={warps}: {ms:.3f} ms, {tbs:.2f} TB/s")


if __name__ == "__main__":
    main()
