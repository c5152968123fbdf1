"""Timing: one timed call, the rotation loop around it, the environment, the device's peaks.

The clock, the CUDA synchronize and the event class are bound when this module is imported,
which the worker does before any user code runs: a candidate that later replaces
`time.perf_counter_ns` or `torch.cuda.synchronize` does not change what the harness measures
(the candidate stage also reports the replacement as tampering).
"""
import importlib.metadata
import platform
import statistics
import sys
import time

import torch

from .loader import clone_value

_perf_counter_ns = time.perf_counter_ns
_cuda_synchronize = torch.cuda.synchronize
_CudaEvent = torch.cuda.Event

# Larger than the L2 cache of any current GPU, as in KernelBench.
L2_FLUSH_BYTES = 256 * 1024 * 1024
# The most timed calls one measurement makes while extending towards min_time_s.
MAX_REPS = 1000


def use_threads(job):
    """PyTorch's CPU threads for this stage: the job's count (the reference and the candidate
    get the same one), else PyTorch's default. Returns the count in use."""
    threads = job.get("threads")
    if isinstance(threads, int) and threads > 0:
        torch.set_num_threads(threads)
        try:  # only possible before any inter-op work has started
            torch.set_num_interop_threads(threads)
        except RuntimeError:
            pass
    return torch.get_num_threads()


def is_cuda(device):
    return torch.device(device).type == "cuda"


def sync(device):
    """Wait for all work queued on `device` (every stream); nothing to wait for on the CPU."""
    if is_cuda(device):
        _cuda_synchronize(torch.device(device))


class Timer:
    """Times one call at a time on `device`, in milliseconds."""

    def __init__(self, device):
        self.device = torch.device(device)
        self._flush = None
        if self.device.type == "cuda":
            # Allocated once: allocating 256 MiB per call would itself disturb the timing.
            self._flush = torch.empty(L2_FLUSH_BYTES, dtype=torch.uint8, device=self.device)

    def time_call(self, fn):
        """(elapsed ms, fn()) for one call."""
        if self._flush is None:
            start = _perf_counter_ns()
            result = fn()
            return (_perf_counter_ns() - start) / 1e6, result
        return self._time_cuda(fn)

    def _time_cuda(self, fn):
        # Cold cache: whatever fn reads comes from memory, not from the previous call's L2.
        self._flush.fill_(0)
        _cuda_synchronize(self.device)
        start = _CudaEvent(enable_timing=True)
        end = _CudaEvent(enable_timing=True)
        start.record()
        result = fn()
        # Device-wide synchronize before the end event: work fn queued on side streams is
        # counted, not only the work on the current stream the events are recorded on.
        _cuda_synchronize(self.device)
        end.record()
        end.synchronize()
        return start.elapsed_time(end), result


def median(xs):
    if not xs:
        raise ValueError("median of no samples")
    return statistics.median(xs)


def measure(timer, fn, input_sets, warmup, reps, min_time_s, max_reps=MAX_REPS, on_result=None,
            slots=None, warmup_sets=None):
    """Samples (ms) of `fn(*inputs)`, over the input sets numbered in `slots` (all by default) in
    turn.

    `warmup` untimed calls, then at least `reps` timed ones, more while the timed total is below
    `min_time_s` (up to `max_reps`). Each call gets a fresh copy of its input set, made before
    the timer starts and while the previous copy is still alive, so consecutive calls never see
    the same addresses (defeats caches keyed by data_ptr). `on_result(slot, result)` sees each
    timed call's result. `warmup_sets`: the warm-up calls' sets, when they are not the timed
    sets (whose first use is then a timed call).
    """
    if not input_sets:
        raise ValueError("measure needs at least one input set")
    count = len(input_sets)
    slots = list(range(count)) if not slots else list(slots)
    for i in range(warmup):
        if warmup_sets:
            fn(*clone_value(warmup_sets[i % len(warmup_sets)]))
        else:
            fn(*clone_value(input_sets[slots[i % len(slots)]]))
    sync(timer.device)
    samples, args = [], None
    while wants_more(samples, reps, min_time_s, max_reps):
        slot = slots[len(samples) % len(slots)]
        args = clone_value(input_sets[slot])  # `args` still holds the previous copy here
        sync(timer.device)  # the copy is not part of the timed call
        ms, result = timer.time_call(lambda args=args: fn(*args))
        samples.append(ms)
        if on_result is not None:
            on_result(slot, result)
    return samples


def round_slots(count, rounds):
    """The timing sets' numbers split into `rounds` consecutive runs, one per round (never more
    rounds than sets). The reference's round k and the candidate's round k time the same sets,
    and each set is new to the candidate in its round."""
    rounds = max(1, min(int(rounds), int(count)))
    return [list(range(k * count // rounds, (k + 1) * count // rounds)) for k in range(rounds)]


def per_round(total, rounds):
    """A whole measurement's `total` (calls, or seconds) shared out over `rounds` rounds."""
    if isinstance(total, float):
        return total / rounds
    return -(-int(total) // rounds)


def wants_more(samples, reps, min_time_s, max_reps):
    if len(samples) < max(reps, 1):
        return True
    return sum(samples) < min_time_s * 1e3 and len(samples) < max_reps


# ---------------------------------------------------------------------------------------------
# Environment


def env_facts(device):
    """The `env` fact: versions, and the device the stage ran on."""
    cuda = is_cuda(device)
    return {
        "python": platform.python_version(),
        "torch": str(torch.__version__),
        "triton": _triton_version(),
        "numpy": _package_version("numpy"),
        "cuda": torch.version.cuda if cuda else None,
        "device_name": _device_name(device),
    }


def _triton_version():
    """The installed Triton's version, or the shim's when the opencl backend loaded it."""
    module = sys.modules.get("triton")
    if getattr(module, "CRUCIBLE_SHIM", False):
        return str(getattr(module, "__version__", "crucible-shim"))
    return _package_version("triton")


def _package_version(name):
    # From the installed metadata, not by importing: importing triton here would fix its
    # configuration (TRITON_INTERPRET) before the stage has set it up.
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _device_name(device):
    if is_cuda(device):
        return f"cuda: {torch.cuda.get_device_name(torch.device(device))}"
    return f"cpu: {cpu_model()}"  # the thread count is a timing fact of its own


def cpu_model():
    """The CPU's model name from /proc/cpuinfo (Linux), else what `platform` knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "Hardware") and value.strip():
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


# ---------------------------------------------------------------------------------------------
# Device peaks (the roofline the judge compares achieved throughput against)


def device_peak(device):
    """{"kind", "name", "bandwidth_gbs", "peak_gflops"} measured on `device`, each the best
    of a few runs: a copy of a tensor larger than any cache, and a square matmul."""
    cuda = is_cuda(device)
    device = torch.device(device)
    if cuda:
        name = torch.cuda.get_device_name(device)
        copy_bytes, matmul_n, dtype, runs = 1024 * 1024 * 1024, 4096, torch.float16, 5
    else:
        name = cpu_model()
        copy_bytes, matmul_n, dtype, runs = 64 * 1024 * 1024, 1024, torch.float32, 3
    with torch.no_grad():
        bandwidth = _copy_bandwidth_gbs(device, copy_bytes, runs)
        flops = _matmul_gflops(device, matmul_n, dtype, runs)
    if cuda:
        torch.cuda.empty_cache()
    clock = "CUDA events" if cuda else f"the host clock, {torch.get_num_threads()} threads"
    method = (f"bandwidth: a {copy_bytes >> 20} MiB float32 copy, bytes read plus written; "
              f"FLOP rate: a {matmul_n}^3 {str(dtype).removeprefix('torch.')} torch.mm; "
              f"best of {runs} each, {clock}")
    return {"kind": device.type, "name": name, "bandwidth_gbs": round(bandwidth, 2),
            "peak_gflops": round(flops, 1), "method": method}


def _best_ms(device, fn, runs):
    fn()  # warm-up: first touch of the pages, cuBLAS handles, thread pool start
    sync(device)
    best = float("inf")
    for _ in range(runs):
        if is_cuda(device):
            start, end = _CudaEvent(enable_timing=True), _CudaEvent(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            best = min(best, start.elapsed_time(end))
        else:
            begin = _perf_counter_ns()
            fn()
            best = min(best, (_perf_counter_ns() - begin) / 1e6)
    return max(best, 1e-6)


def _copy_bandwidth_gbs(device, nbytes, runs):
    src = torch.ones(nbytes // 4, dtype=torch.float32, device=device)
    dst = torch.empty_like(src)
    ms = _best_ms(device, lambda: dst.copy_(src), runs)
    return 2 * nbytes / (ms * 1e-3) / 1e9  # every byte is read once and written once


def _matmul_gflops(device, n, dtype, runs):
    a = torch.randn(n, n, device=device).to(dtype)
    b = torch.randn(n, n, device=device).to(dtype)
    out = torch.empty(n, n, device=device, dtype=dtype)
    ms = _best_ms(device, lambda: torch.mm(a, b, out=out), runs)
    return 2 * n ** 3 / (ms * 1e-3) / 1e9
