#!/usr/bin/env python3
"""What the verifier's watchers cost a candidate per timed call, one watcher at a time.

The verifier times every candidate call under its guards (launch counting, the ATen recorder,
the audit hook, the thread watch) with its own timer (L2 flushed before each call on a GPU).
This builds the reference's inputs and the candidate's ModelNew as the worker does and times
the same forward calls with the verifier's timer as the watchers are installed one after the
other (an audit hook cannot be removed, so the steps only add up), each step twice:
* `steady`: calls cycling over input sets already on the device (a fresh clone per call);
* `fresh`: each call on a set copied into newly reserved device buffers just before it, the
  calls the verifier counts.
Next to them, eager PyTorch under the same timer, with nothing installed.

Usage: watch_cost.py REFERENCE.py CANDIDATE.py [--backend cuda|opencl|interpret] [--calls N]
       [--json]
Run it where the candidate runs (a GPU machine for cuda; the dev machine for opencl), from the
repository root; `candidates_from_db.py` writes a bench run's tasks and candidates out for it. A probe, not a test: its numbers go to docs/PERFORMANCE.md with the machine.
"""
import argparse
import importlib.util
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "core", "worker"))


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reference")
    parser.add_argument("candidate")
    parser.add_argument("--backend", default="cuda", choices=["cuda", "opencl", "interpret"])
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--json", action="store_true")
    return parser.parse_args()


class Setup:
    """What a probe of a candidate's timed calls starts from, as the worker builds it: the
    backend's environment, the device, the two modules, the init inputs and eight input sets."""

    def __init__(self, args, program):
        from crucible_worker import candidate_stage
        candidate_stage.configure_environment({"backend": args.backend, "threads": 1})
        import torch
        self.device = "cuda" if args.backend == "cuda" else "cpu"
        if self.device == "cuda" and not torch.cuda.is_available():
            sys.exit(f"{program}: no CUDA device")
        if self.device == "cpu":
            torch.set_num_threads(1)
        self.reference = load(args.reference, "reference")
        self.candidate = load(args.candidate, "candidate")
        torch.manual_seed(42)
        self.init = self.reference.get_init_inputs()
        self.host_sets = [self.reference.get_inputs() for _ in range(8)]
        self.args = args

    def watchers(self):
        """(code map, launch tracker, ATen recorder) as the worker wires them, none installed."""
        from crucible_worker import guards
        code_map = guards.CodeMap(os.path.abspath(self.args.candidate))
        launches = guards.LaunchTracker()
        launches.code_map = code_map
        recorder = guards.AtenRecorder()
        launches.recorder = recorder
        return code_map, launches, recorder

    def model(self, module_class):
        """`module_class` built on the init inputs under the public seed, on the device."""
        import torch
        torch.manual_seed(42)
        return module_class(*self.init).to(self.device).eval()


def main():
    args = parse_args()
    setup = Setup(args, "watch_cost.py")
    import torch
    from crucible_worker import guards, timing
    from crucible_worker.loader import clone_value

    device, reference, candidate = setup.device, setup.reference, setup.candidate
    host_sets = setup.host_sets

    def place(inputs):
        return [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]

    placed = [place(s) for s in host_sets]
    timer = timing.Timer(device)

    def measure(model, wrap):
        """(steady median, fresh median) in ms of `wrap(lambda: model(*inputs))` calls."""
        with torch.no_grad():
            for s in placed[:3]:
                model(*s)
            timing.sync(device)
            steady = []
            for i in range(args.calls):
                inputs = clone_value(placed[i % len(placed)])
                steady.append(timer.time_call(lambda x=inputs: wrap(lambda: model(*x)))[0])
            fresh = []
            for i in range(max(8, args.calls // 4)):
                host = host_sets[i % len(host_sets)]
                buffers = [torch.empty_like(x, device=device) if isinstance(x, torch.Tensor)
                           else x for x in host]
                inputs = [b.copy_(h) if isinstance(h, torch.Tensor) else h
                          for b, h in zip(buffers, host)]
                fresh.append(timer.time_call(lambda x=inputs: wrap(lambda: model(*x)))[0])
        return statistics.median(steady), statistics.median(fresh)

    def bare(call):
        return call()

    eager = setup.model(reference.Model)
    measure(eager, bare)  # the process's first calls (the allocator's first sizes) not counted
    rows = [("eager, nothing installed", *measure(eager, bare))]

    code_map, launches, recorder = setup.watchers()
    model = setup.model(candidate.ModelNew)
    rows.append(("candidate, bare", *measure(model, bare)))
    launches.install()
    rows.append(("+ launch counting", *measure(model, bare)))
    recorder.start()

    def ranged(call):
        with recorder.forward("timing"):
            return call()

    rows.append(("+ ATen recorder (its forward range)", *measure(model, ranged)))
    auditor = guards.Auditor(code_map, write_roots=[], read_roots=[ROOT])
    auditor.install()
    rows.append(("+ audit hook", *measure(model, ranged)))
    threads = guards.ThreadWatch(code_map, auditor)
    threads.install()
    rows.append(("+ thread watch", *measure(model, ranged)))
    rows.append(("eager again, with all of them installed", *measure(eager, ranged)))
    # Ended here: the recorder's record is read only at the end, as the worker does.
    recorder.finish()

    if args.json:
        print(json.dumps([{"step": s, "steady_ms": a, "fresh_ms": b} for s, a, b in rows]))
        return
    print(f"{'step':40s} {'steady ms':>10s} {'fresh ms':>10s}")
    for step, steady_ms, fresh_ms in rows:
        print(f"{step:40s} {steady_ms:10.3f} {fresh_ms:10.3f}")
    sys.stdout.flush()
    os._exit(0)  # the profiler's teardown at exit is not what is measured


if __name__ == "__main__":
    main()
