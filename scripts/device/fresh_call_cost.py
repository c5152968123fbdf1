#!/usr/bin/env python3
"""What the conditions of a counted call cost, apart: an idle wait before it, new buffers, a
set handed over by another process, and whether warming the device or the CPU first wins it back.

The verifier counts each timing set's first call, made just after the input monitor hands the set
over (a wait on a socket, a copy into buffers reserved for it). Steady calls come back to back.
This times eager PyTorch and the candidate with the verifier's timer and every watcher installed
(as `watch_cost.py`'s last rows) under each condition, and reports per condition the median event
time and the median CPU time of the call itself (the Python launch path), so a gap between
steady and counted calls can be put down to the device's clocks, the CPU, or the memory.

Usage: fresh_call_cost.py REFERENCE.py CANDIDATE.py [--backend cuda|opencl] [--calls N]
       [--gap-ms MS] [--json]
A probe, not a test: its numbers go to docs/PERFORMANCE.md with the machine.
"""
import argparse
import io
import os
import socket
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from watch_cost import ROOT, Setup  # noqa: E402


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reference")
    parser.add_argument("candidate")
    parser.add_argument("--backend", default="cuda", choices=["cuda", "opencl"])
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--gap-ms", type=float, default=20.0)
    parser.add_argument("--json", action="store_true")
    return parser.parse_args()


class Sender:
    """Another process that sends each input set's bytes over a socket when asked, as the input
    monitor does (its wait and copy are what a counted call follows)."""

    def __init__(self, torch, host_sets):
        blobs = []
        for s in host_sets:
            buffer = io.BytesIO()
            torch.save(s, buffer)
            blobs.append(buffer.getvalue())
        self.ours, theirs = socket.socketpair()
        self.pid = os.fork()
        if self.pid == 0:
            self.ours.close()
            while True:
                index = theirs.recv(4)
                if not index:
                    os._exit(0)
                blob = blobs[int.from_bytes(index, "little") % len(blobs)]
                theirs.sendall(len(blob).to_bytes(8, "little") + blob)
        theirs.close()

    def fetch(self, torch, index):
        self.ours.sendall(int(index).to_bytes(4, "little"))
        size = int.from_bytes(self._read(8), "little")
        return torch.load(io.BytesIO(self._read(size)))

    def _read(self, n):
        chunks = []
        while n:
            chunk = self.ours.recv(min(n, 1 << 20))
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)


def main():
    args = parse_args()
    setup = Setup(args, "fresh_call_cost.py")
    import torch
    from crucible_worker import guards, timing
    from crucible_worker.loader import clone_value

    device, reference, candidate = setup.device, setup.reference, setup.candidate
    host_sets = setup.host_sets
    sender = Sender(torch, host_sets)

    def place(inputs):
        return [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]

    placed = [place(s) for s in host_sets]
    timer = timing.Timer(device)
    gap_s = args.gap_ms / 1e3

    def into_new_buffers(host):
        buffers = [torch.empty_like(x, device=device) if isinstance(x, torch.Tensor) else x
                   for x in host]
        return [b.copy_(h) if isinstance(h, torch.Tensor) else h for b, h in zip(buffers, host)]

    def warm_device():
        if device == "cuda":
            torch.cuda._sleep(200_000)  # a few hundred microseconds of device work

    def spin_cpu():
        end = time.perf_counter() + 0.002
        while time.perf_counter() < end:
            pass

    def prepared(inputs, *before_call):
        """`inputs`, after running `before_call` in order (the last things before the timer)."""
        for step in before_call:
            step()
        return inputs

    def wait():
        time.sleep(gap_s)

    conditions = {
        "steady (back to back)": lambda i: clone_value(placed[i % 8]),
        "new buffers, no wait": lambda i: into_new_buffers(host_sets[i % 8]),
        "idle wait": lambda i: (wait(), clone_value(placed[i % 8]))[1],
        "idle wait, device warmed": lambda i: prepared(
            (wait(), clone_value(placed[i % 8]))[1], warm_device),
        "idle wait, CPU spun": lambda i: prepared(
            (wait(), clone_value(placed[i % 8]))[1], spin_cpu),
        "from another process": lambda i: into_new_buffers(sender.fetch(torch, i)),
        "from another process, warmed": lambda i: prepared(
            into_new_buffers(sender.fetch(torch, i)), warm_device, spin_cpu),
    }

    def measure(model, wrap, prepare):
        events, cpu = [], []

        def call(x):
            start = time.perf_counter()
            out = wrap(lambda: model(*x))
            cpu.append((time.perf_counter() - start) * 1e3)
            return out

        with torch.no_grad():
            for s in placed[:3]:
                model(*s)
            timing.sync(device)
            for i in range(args.calls):
                inputs = prepare(i)
                events.append(timer.time_call(lambda x=inputs: call(x))[0])
        return statistics.median(events), statistics.median(cpu)

    code_map, launches, recorder = setup.watchers()
    eager = setup.model(reference.Model)
    model = setup.model(candidate.ModelNew)
    launches.install()
    recorder.start()

    def ranged(call):
        with recorder.forward("timing"):
            return call()

    auditor = guards.Auditor(code_map, write_roots=[], read_roots=[ROOT])
    auditor.install()
    guards.ThreadWatch(code_map, auditor).install()
    rows = []
    measure(eager, ranged, conditions["steady (back to back)"])  # first sizes not counted
    for label, prepare in conditions.items():
        rows.append((label, *measure(eager, ranged, prepare), *measure(model, ranged, prepare)))
    recorder.finish()

    if args.json:
        import json
        print(json.dumps([{"condition": c, "eager_ms": a, "eager_cpu_ms": b, "candidate_ms": x,
                           "candidate_cpu_ms": y} for c, a, b, x, y in rows]))
    else:
        print(f"{'condition':32s} {'eager':>8s} {'(cpu)':>8s} {'cand':>8s} {'(cpu)':>8s}")
        for c, a, b, x, y in rows:
            print(f"{c:32s} {a:8.3f} {b:8.3f} {x:8.3f} {y:8.3f}")
    sys.stdout.flush()
    os._exit(0)  # the profiler's teardown at exit is not what is measured


if __name__ == "__main__":
    main()
