"""Benchmarks of the opencl backend (docs/PERFORMANCE.md, "OpenCL backend"): each kernel of
bench_opencl_kernels.py on Crucible's Triton-to-OpenCL compiler (PoCL, all cores) against eager
PyTorch on the CPU (same thread count) and against the Triton interpreter, plus the cold compile
per kernel and the warm-cache launch path. Run through scripts/bench/bench_opencl.sh.

The shim is imported the way the worker's candidate stage imports it (use_triton_shim); the
interpreter runs in a child process (the shim shadows triton in this one), and so does the
warm-cache measurement (a fresh process over the disk cache the cold run filled)."""

import argparse
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
WORKER = REPO / "core" / "worker"

TARGETS = {  # what each measurement must reach (the targets docs/PERFORMANCE.md reports against)
    "pointwise_chain": ("speedup_vs_eager", 2.0, ">= 2x eager"),
    "softmax": ("speedup_vs_eager", 1.0, ">= eager"),
    "layernorm": ("speedup_vs_eager", 1.0, ">= eager"),
    "matmul_1024": ("speedup_vs_eager", 0.5, ">= 0.5 of PyTorch GFLOP/s"),
}
COLD_COMPILE_TARGET_S = 1.5
WARM_LAUNCH_TARGET_MS = 50.0


def load():
    return " ".join(pathlib.Path("/proc/loadavg").read_text().split()[:3])


def median_ms(fn, repeats, warmup):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def interleaved_ms(fns, repeats, warmup):
    """Medians of several functions timed in turn (A B A B ...), so a burst of load from other
    processes on a shared machine hits all of them alike."""
    for _ in range(warmup):
        for fn in fns:
            fn()
    times = [[] for _ in fns]
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn()
            times[i].append(time.perf_counter() - t0)
    return [statistics.median(t) * 1e3 for t in times]


def use_shim():
    sys.path.insert(0, str(WORKER))
    from crucible_worker.candidate_stage import use_triton_shim
    use_triton_shim()
    sys.path.insert(0, str(HERE))


def device_name():
    try:
        out = subprocess.run(["clinfo", "-l"], capture_output=True, text=True, timeout=30).stdout
        names = [line.split("Device #")[1].split(":", 1)[1].strip() for line in out.splitlines() if "Device #" in line]
        return names[0] if names else "unknown"
    except (OSError, subprocess.SubprocessError, IndexError):
        return "unknown"


def machine():
    cpu = "unknown"
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    return {"cpu": cpu, "cores": os.cpu_count(), "arch": platform.machine(), "opencl_device": device_name(),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}


# ---- the opencl run (this process) ------------------------------------------------------------

def run_opencl(args):
    import torch
    torch.set_num_threads(args.threads)
    import bench_opencl_kernels as bk
    t0 = time.perf_counter()
    bk.first_launch(torch.zeros(16))
    init_ms = (time.perf_counter() - t0) * 1e3
    print(f"  first build in the process (runtime start, PoCL loads its kernel library): {init_ms:.0f} ms")
    results = []
    for case in bk.CASES:
        if args.cases and case.name not in args.cases:
            continue
        t = case.make(args.scale)
        if case.name.startswith("matmul"):
            launch, first_ms = pick_matmul_blocks(bk, t, args)
        else:
            launch = case.triton
            t0 = time.perf_counter()
            launch(t)  # first launch: front end + OpenCL build + run
            first_ms = (time.perf_counter() - t0) * 1e3
        out = launch(t)
        ref = case.eager(t)
        err = (out - ref).abs().max().item()
        tcl_ms, eager_ms = interleaved_ms([lambda launch=launch, t=t: launch(t),
                                           lambda case=case, t=t: case.eager(t)],
                                          args.repeats, args.warmup)
        r = {"case": case.name, "shape": {k: list(v.shape) for k, v in t.items()}, "opencl_ms": tcl_ms,
             "eager_ms": eager_ms, "speedup_vs_eager": eager_ms / tcl_ms, "max_abs_err": err,
             "first_launch_ms": first_ms, "cold_compile_s": max(0.0, first_ms - tcl_ms) / 1e3}
        if case.flops:
            r["opencl_gflops"] = case.flops(t) / tcl_ms / 1e6
            r["eager_gflops"] = case.flops(t) / eager_ms / 1e6
        if case.name.startswith("matmul"):
            r["blocks"] = list(bk.MATMUL_BLOCKS)
        results.append(r)
        print(f"  {case.name:16s} opencl {tcl_ms:9.2f} ms  eager {eager_ms:9.2f} ms  "
              f"x{eager_ms / tcl_ms:5.2f}  first {first_ms:7.0f} ms  err {err:.1e}", flush=True)
    return results, init_ms


def pick_matmul_blocks(bk, t, args):
    """The fastest of a few tilings, like an autotuned candidate; returns its launch and the time
    of its first (cold) launch."""
    menu = [(128, 128, 32), (128, 128, 64), (64, 128, 32)]
    if args.quick:
        menu = menu[:1]
    best = None
    for blocks in menu:
        t0 = time.perf_counter()
        bk._matmul_triton(t, blocks)
        first_ms = (time.perf_counter() - t0) * 1e3
        ms = median_ms(lambda blocks=blocks: bk._matmul_triton(t, blocks), max(1, args.repeats // 3), 0)
        if best is None or ms < best[0]:
            best = (ms, blocks, first_ms)
    bk.MATMUL_BLOCKS = best[1]
    return (lambda t: bk._matmul_triton(t, best[1])), best[2]


def launch_overhead_ms(args):
    """The shim's per-launch cost: a one-program pointwise launch on 1024 elements."""
    import torch
    import bench_opencl_kernels as bk
    t = {"x": torch.randn(1024), "y": torch.randn(1024)}
    out = torch.empty(1024)
    k = lambda: bk.pointwise_chain_kernel[(1,)](t["x"], t["y"], out, 1024, BLOCK=1024)
    k()
    return median_ms(k, 200, 20)


# ---- child processes --------------------------------------------------------------------------

def child(args, mode):
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if mode == "interpret":
        env["TRITON_INTERPRET"] = "1"
    cmd = [sys.executable, str(pathlib.Path(__file__).resolve()), f"--child={mode}", f"--threads={args.threads}",
           f"--repeats={args.interp_repeats if mode == 'interpret' else args.repeats}", f"--scale={args.scale}"]
    if args.cases:
        cmd.append("--cases=" + ",".join(args.cases))
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise RuntimeError(f"the {mode} child failed (exit {p.returncode})")
    return json.loads(p.stdout.strip().splitlines()[-1])


def child_interpret(args):
    """Times each case under the real Triton interpreter (TRITON_INTERPRET=1)."""
    import torch
    torch.set_num_threads(args.threads)
    sys.path.insert(0, str(HERE))
    import bench_opencl_kernels as bk
    out = {}
    for case in bk.CASES:
        if args.cases and case.name not in args.cases:
            continue
        small = case.make(args.scale * case.interp_scale)
        full = case.make(args.scale) if case.interp_scale < 1 else small
        work = next(iter(full.values())).numel() / next(iter(small.values())).numel()
        out[case.name] = median_ms(lambda case=case, small=small: case.triton(small), args.repeats, 0) * work
        if work != 1:
            out.setdefault("scaled", {})[case.name] = work
    return out


def child_warm(args):
    """A fresh process over a warm disk cache: the first launch of each kernel (shim front end,
    disk-cache hit, launch) minus its steady-state time is the warm launch path."""
    use_shim()
    import torch
    torch.set_num_threads(args.threads)
    import bench_opencl_kernels as bk
    t0 = time.perf_counter()
    bk.first_launch(torch.zeros(16))
    out = {"first_build_ms": (time.perf_counter() - t0) * 1e3}  # the runtime's start, warm
    for case in bk.CASES:
        if args.cases and case.name not in args.cases:
            continue
        t = case.make(args.scale)
        t0 = time.perf_counter()
        case.triton(t)
        first = (time.perf_counter() - t0) * 1e3
        steady = median_ms(lambda case=case, t=t: case.triton(t), max(3, args.repeats // 2), 1)
        out[case.name] = {"first_ms": first, "steady_ms": steady, "path_ms": max(0.0, first - steady)}
    return out


# ---- report -----------------------------------------------------------------------------------

def verdict(ok):
    return "met" if ok else "NOT met"


def report(res):
    m = res["machine"]
    print(f"\nmachine: {m['cpu']}, {m['cores']} cores ({m['arch']}); OpenCL device: {m['opencl_device']}")
    print(f"date:    {m['date']}; load before {res['load_before']}, after {res['load_after']}")
    print(f"threads: PyTorch {res['threads']}, PoCL {res['pocl_threads']}; median of {res['repeats']} "
          f"after {res['warmup']} warmup (interpreter: {res['interp_repeats']})\n")
    print("| kernel | shape | opencl ms | eager ms | vs eager | interpreter ms | vs interpreter | target |")
    print("|---|---|---|---|---|---|---|---|")
    for r in res["kernels"]:
        shape = " ".join("x".join(map(str, s)) for s in r["shape"].values())
        interp = res["interpreter"].get(r["case"]) if res.get("interpreter") else None  # scaled
        ims = f"{interp:.1f}" if interp else "-"
        vsi = f"{interp / r['opencl_ms']:.1f}x" if interp else "-"
        tgt = "-"
        if r["case"] in TARGETS:
            key, want, text = TARGETS[r["case"]]
            tgt = f"{text}: {verdict(r[key] >= want)}"
        extra = ""
        if "opencl_gflops" in r and r["case"].startswith("matmul"):
            extra = f" ({r['opencl_gflops']:.1f} vs {r['eager_gflops']:.1f} GFLOP/s, blocks {r['blocks']})"
        print(f"| {r['case']}{extra} | {shape} | {r['opencl_ms']:.2f} | {r['eager_ms']:.2f} | "
              f"{r['speedup_vs_eager']:.2f}x | {ims} | {vsi} | {tgt} |")
    print(f"\n| kernel | cold compile s (target < {COLD_COMPILE_TARGET_S}) | warm-cache launch path ms "
          f"(target < {WARM_LAUNCH_TARGET_MS:.0f}) |")
    print("|---|---|---|")
    for r in res["kernels"]:
        w = res.get("warm", {}).get(r["case"])
        warm = f"{w['path_ms']:.1f} ({verdict(w['path_ms'] < WARM_LAUNCH_TARGET_MS)})" if w else "-"
        print(f"| {r['case']} | {r['cold_compile_s']:.2f} ({verdict(r['cold_compile_s'] < COLD_COMPILE_TARGET_S)}) "
              f"| {warm} |")
    scaled = res.get("interpreter", {}).get("scaled", {})
    if scaled:
        print("\ninterpreter: " + ", ".join(f"{k} ran 1/{v:.0f} of the size, time scaled x{v:.0f}" for k, v in scaled.items()))
    print(f"\nfirst build in a process (runtime start; PoCL loads its kernel library): {res['first_build_ms']:.0f} ms "
          f"cold, {res.get('warm', {}).get('first_build_ms', float('nan')):.0f} ms from the warm disk cache")
    print(f"per-launch overhead of the shim (1 program, 1024 elements): {res['launch_overhead_ms']:.3f} ms")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=10, help="timed runs per kernel (median)")
    ap.add_argument("--warmup", type=int, default=2, help="untimed runs first")
    ap.add_argument("--interp-repeats", type=int, default=1, help="timed interpreter runs")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="PyTorch threads (PoCL uses all cores)")
    ap.add_argument("--scale", type=float, default=1.0, help="problem size factor (1 = the sizes the targets are set for)")
    ap.add_argument("--cases", type=lambda s: [c for c in s.split(",") if c], default=[],
                    help="comma-separated case names (default: all)")
    ap.add_argument("--no-interpreter", action="store_true", help="skip the Triton interpreter")
    ap.add_argument("--quick", action="store_true", help="one matmul tiling only")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    ap.add_argument("--child", choices=["interpret", "warm"], help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.child:
        print(json.dumps(child_interpret(args) if args.child == "interpret" else child_warm(args)))
        return 0

    res = {"machine": machine(), "load_before": load(), "threads": args.threads,
           "pocl_threads": os.environ.get("POCL_MAX_PTHREAD_COUNT", f"all ({os.cpu_count()})"),
           "repeats": args.repeats, "warmup": args.warmup, "interp_repeats": args.interp_repeats,
           "scale": args.scale}
    with tempfile.TemporaryDirectory(prefix="bench-opencl-cache-") as cache:
        # Both caches empty: every first launch is a cold compile (PoCL keeps its own kernel
        # cache, by default in ~/.cache/pocl, which would otherwise hide the OpenCL build).
        os.environ["CRUCIBLE_TCL_CACHE_DIR"] = cache
        os.environ["POCL_CACHE_DIR"] = os.path.join(cache, "pocl")
        use_shim()
        print(f"opencl vs eager (threads {args.threads}, load {load()}):", flush=True)
        res["kernels"], res["first_build_ms"] = run_opencl(args)
        res["launch_overhead_ms"] = launch_overhead_ms(args)
        print(f"warm-cache launch path (fresh process, load {load()})", flush=True)
        res["warm"] = child(args, "warm")
    if not args.no_interpreter:
        print(f"Triton interpreter (load {load()})", flush=True)
        res["interpreter"] = child(args, "interpret")
    res["load_after"] = load()
    report(res)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
