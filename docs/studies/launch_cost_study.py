#!/usr/bin/env python3
"""What one kernel launch costs the host, piece by piece, on a GPU: a Triton launch through
`kernel[grid](...)`, the same with 20 integer arguments more, eager PyTorch's launch of the same
work, and the host bookkeeping the synthesizer's candidates do around their launches (an output
allocation, `triton.cdiv`, `torch.cuda.get_device_properties`). Each figure is the median of 20
runs of 2000 calls, timed on the host (the host cost, not the kernel's). The profile view showed
launch-bound candidates spending most of a forward call on the host; this says where a lighter
launch path would win.

Usage: launch_cost_study.py [--json]   (on a machine with an NVIDIA GPU, Triton and PyTorch)
"""
import json
import statistics
import sys
import time

import torch
import triton
import triton.language as tl


@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


@triton.jit
def _add_strided(x_ptr, y_ptr, out_ptr, n, s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12,
                 s13, s14, s15, s16, s17, s18, s19, BLOCK: tl.constexpr):
    # The same work with 20 integer arguments more (strides a generic kernel takes, unused
    # here): what each runtime argument costs Triton's binder on every launch.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


def per_call_us(fn, calls=2000, runs=20):
    fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - start) / calls * 1e6)
        torch.cuda.synchronize()
    return statistics.median(samples)


def main():
    if not torch.cuda.is_available():
        sys.exit("launch_cost_study.py: no CUDA device")
    dev = torch.device("cuda")
    n = 4096
    x, y, out = (torch.randn(n, device=dev) for _ in range(3))
    grid = (triton.cdiv(n, 1024),)
    strides = [17 + 2 * i for i in range(20)]  # neither 1 nor multiples of 16: no specialisation
    figures = {
        "triton launch kernel[grid](...)": per_call_us(lambda: _add[grid](x, y, out, n, BLOCK=1024)),
        "triton launch with 20 more int arguments": per_call_us(
            lambda: _add_strided[grid](x, y, out, n, *strides, BLOCK=1024)),
        "eager torch.add(x, y, out=out)": per_call_us(lambda: torch.add(x, y, out=out)),
        "torch.empty_like(x)": per_call_us(lambda: torch.empty_like(x)),
        "torch.cuda.get_device_properties(dev)": per_call_us(
            lambda: torch.cuda.get_device_properties(dev)),
        "triton.cdiv(n, 1024)": per_call_us(lambda: triton.cdiv(n, 1024)),
        "x.stride() and x.shape[0]": per_call_us(lambda: (x.stride(), x.shape[0])),
    }
    meta = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
            "triton": triton.__version__}
    if "--json" in sys.argv:
        print(json.dumps({"meta": meta, "host_us_per_call": figures}, indent=2))
        return
    print(meta)
    for name, us in figures.items():
        print(f"{us:8.2f} us  {name}")


if __name__ == "__main__":
    main()
