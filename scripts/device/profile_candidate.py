#!/usr/bin/env python3
"""Where does a candidate's time go, kernel by kernel, next to eager PyTorch's own kernels?

Builds the reference's Model and the candidate's ModelNew from the same init inputs and seed,
runs both on the reference's get_inputs() on the GPU, and prints, for each, the CUDA time per
kernel under torch.profiler (the average over the profiled calls) with its share of the total.
A verification says how fast a candidate is; this says which of its kernels to work on.

Usage: profile_candidate.py REFERENCE.py CANDIDATE.py [--calls N] [--json]
(run it where the candidate runs: a machine with an NVIDIA GPU, Triton and PyTorch).
"""
import argparse
import importlib.util
import json
import sys

import torch


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kernel_table(model, inputs, calls):
    """[(kernel name, mean microseconds per forward call)], slowest first, and the total."""
    with torch.no_grad():
        for _ in range(3):  # compile, autotune and warm the caches outside the profile
            model(*inputs)
        torch.cuda.synchronize()
        activities = [torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=activities) as prof:
            for _ in range(calls):
                model(*inputs)
            torch.cuda.synchronize()
    rows = []
    for event in prof.key_averages():
        device_us = getattr(event, "device_time_total", None)
        if device_us is None:  # older torch
            device_us = event.cuda_time_total
        if device_us > 0:
            rows.append((event.key, device_us / calls, event.count / calls))
    rows.sort(key=lambda r: -r[1])
    return rows, sum(r[1] for r in rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reference")
    parser.add_argument("candidate")
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--json", action="store_true", help="one JSON object instead of tables")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("profile_candidate.py: no CUDA device")

    reference = load(args.reference, "reference")
    candidate = load(args.candidate, "candidate")
    torch.manual_seed(42)
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in reference.get_inputs()]
    init = reference.get_init_inputs()
    torch.manual_seed(42)
    eager = reference.Model(*init).cuda().eval()
    torch.manual_seed(42)
    mine = candidate.ModelNew(*init).cuda().eval()

    result = {}
    for label, model in (("eager", eager), ("candidate", mine)):
        rows, total = kernel_table(model, inputs, args.calls)
        result[label] = {"total_us": total,
                         "kernels": [{"name": n, "us": us, "launches": c} for n, us, c in rows]}
    if args.json:
        print(json.dumps(result))
        return
    for label, r in result.items():
        print(f"{label}: {r['total_us'] / 1000:.3f} ms of kernels per call")
        for k in r["kernels"]:
            share = 100 * k["us"] / r["total_us"] if r["total_us"] else 0
            print(f"  {k['us'] / 1000:9.3f} ms {share:5.1f}%  x{k['launches']:<4g} {k['name'][:90]}")


if __name__ == "__main__":
    main()
