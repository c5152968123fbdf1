"""The candidate stage end to end: honest and cheating candidates, each run the way the C++ side
runs it (`python -I -B worker.py candidate JOB.json`, facts on the result fd), on the Triton
interpreter with small tensors.

All candidates run once, in parallel, in a module fixture; each test reads its candidate's
facts and files.
"""
import hashlib
import json
import os
import textwrap

import pytest
import torch

from candidate_runs import completed_run, run_all, run_candidate
from crucible_worker import value_pack as vp

N = 96  # elements per input: small, the interpreter is slow
TRIALS = 2

HEADER = """\
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def launch_add(x, y, out, n):
    add_kernel[(triton.cdiv(n, 32),)](x, y, out, n, BLOCK=32)
    return out
"""

CANDIDATES = {
    "honest": """
class ModelNew(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        return launch_add(x, y, out, x.numel())
""",
    "passthrough": """
class ModelNew(nn.Module):
    def forward(self, x, y):
        return x + y
""",
    "half_written": """
class ModelNew(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        launch_add(x, y, out, x.numel() // 2)  # the second half is never written
        return out
""",
    "mutates_input": """
class ModelNew(nn.Module):
    def forward(self, x, y):
        out = launch_add(x, y, torch.empty_like(x), x.numel())
        x.zero_()
        return out
""",
    "aliases_input": """
class ModelNew(nn.Module):
    def forward(self, x, y):
        launch_add(x, y, x, x.numel())
        return x
""",
    "eval_branch": """
class ModelNew(nn.Module):
    def eval(self):  # keeps self.training True, hoping the eval check runs the train path
        return self

    def forward(self, x, y):
        if self.training:
            return launch_add(x, y, torch.empty_like(x), x.numel())
        return x + y
""",
    "forge_files": """
import os

OUT = {out_dir!r}


class ModelNew(nn.Module):
    def forward(self, x, y):
        out = launch_add(x, y, torch.empty_like(x), x.numel())
        try:
            torch.save(out, os.path.join(OUT, "actual_1.ctp"))  # MARK-SAVE
        except PermissionError:
            pass
        try:
            os.listdir("/proc/self/fd")  # MARK-FDS
        except PermissionError:
            pass
        target = os.path.join(OUT, "actual_0.ctp")
        if os.path.exists(target):  # no audit event for a mapped file: caught by its digest
            size = os.path.getsize(target)
            mapped = torch.from_file(target, shared=True, size=size, dtype=torch.uint8)
            mapped[-4:] = 0
        return out
""",
    "forge_channel": """
import json
import os

OUT = {out_dir!r}
FORGED = (json.dumps({"type": "facts", "facts": {"forged": True}}) + "\\n").encode()


class ModelNew(nn.Module):
    skip = set()

    def forward(self, x, y):
        if os.path.exists(os.path.join(OUT, "timed_0_0.ctp")):  # timing is over: forge
            for fd in range(3, 1024):
                if os.path.exists(f"/proc/self/fd/{fd}") and fd not in self.skip:
                    try:
                        os.write(fd, FORGED)  # MARK-FORGE
                    except PermissionError:
                        raise  # no os._exit if the channel would not take the forgery
                    except OSError:
                        self.skip.add(fd)
            os._exit(0)
        return x + y
""",
    "timer_patch": """
import gc
import time

time.perf_counter = lambda: 0.0


class ModelNew(nn.Module):
    def forward(self, x, y):
        try:
            gc.get_objects()  # MARK-GC
        except PermissionError:  # walking the heap is blocked, and recorded
            pass
        return launch_add(x, y, torch.empty_like(x), x.numel())
""",
    "socket": """
import socket


class ModelNew(nn.Module):
    def forward(self, x, y):
        self.blocked = False
        try:
            socket.create_connection(("127.0.0.1", 9), timeout=0.1)  # MARK-SOCKET
        except PermissionError:
            self.blocked = True
        except OSError:
            pass
        out = launch_add(x, y, torch.empty_like(x), x.numel())
        return out if self.blocked else out * 0
""",
    "writes_outside": """
OUTSIDE = {outside!r}


class ModelNew(nn.Module):
    def forward(self, x, y):
        with open(OUTSIDE, "w") as f:  # MARK-WRITE
            f.write("escaped")
        return launch_add(x, y, torch.empty_like(x), x.numel())
""",
    "thread": """
import threading


class ModelNew(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        t = threading.Thread(target=launch_add, args=(x, y, out, x.numel()),
                             name="crucible-test-helper")
        t.start()  # MARK-THREAD
        t.join()
        return out
""",
    "subclass": """
class Lazy(torch.Tensor):
    pass


class ModelNew(nn.Module):
    def forward(self, x, y):
        out = launch_add(x, y, torch.empty_like(x), x.numel())
        return out.as_subclass(Lazy)
""",
    "numpy": """
import numpy as np


class ModelNew(nn.Module):
    def forward(self, x, y):
        a, b = x.numpy(), y.numpy()
        s = np.dot(a, b)
        return torch.from_numpy(a + b + 0 * s)
""",
    "torch_after_trials": """
class ModelNew(nn.Module):
    calls = 0

    def forward(self, x, y):
        # Counts calls: the trials, the alternative batch, the repeat, the no-op and eval runs
        # come first; from the tenth call on it is being timed, so compute with torch.
        ModelNew.calls += 1
        if ModelNew.calls > 9:
            return x + y  # MARK-TIMED-TORCH
        out = torch.empty_like(x)
        return launch_add(x, y, out, x.numel())
""",
    "skip_launch_when_unprofiled": """
import sys


class ModelNew(nn.Module):
    def forward(self, x, y):
        if sys.getprofile() is None:  # the old timing loop ran without the profiler
            return (x + y).clone()
        out = torch.empty_like(x)
        return launch_add(x, y, out, x.numel())
""",
    "dispatch_disabled": """
class ModelNew(nn.Module):
    def forward(self, x, y):
        with torch._C._DisableTorchDispatch():  # past the dispatch mode, not the profiler
            z = x + y
        out = torch.empty_like(x)
        return launch_add(z, torch.zeros_like(x), out, x.numel())
""",
    "dynamo_later": """
import importlib
import sys

# The harness leaves torch._dynamo unimported (seconds of startup), its dispatch mode's first
# op included; candidate code that imports it, and seeds through the torch.manual_seed dynamo
# wraps, is not tampering.
DYNAMO_BEFORE_LOAD = "torch._dynamo" in sys.modules


class ModelNew(nn.Module):
    imported = False

    def forward(self, x, y):
        out = torch.empty_like(x)  # an op under the harness's dispatch mode
        if DYNAMO_BEFORE_LOAD or ("torch._dynamo" in sys.modules and not ModelNew.imported):
            raise RuntimeError("the harness imported torch._dynamo")
        importlib.import_module("torch._dynamo")
        ModelNew.imported = True
        torch.manual_seed(0)
        return launch_add(x, y, out, x.numel())
""",
    "raises": """
class ModelNew(nn.Module):
    def forward(self, x, y):
        raise ValueError("boom")  # MARK-RAISE
""",
    "exits": """
import sys


class ModelNew(nn.Module):
    def forward(self, x, y):
        sys.exit(3)  # MARK-EXIT
""",
}


def _inputs(k):
    generator = torch.Generator().manual_seed(43 + k)
    return [torch.randn(N, generator=generator), torch.randn(N, generator=generator)]


def _run_candidate(name, root):
    outside = os.path.join(root, "outside.txt")
    out_dir = os.path.join(root, "cand")
    source = HEADER + textwrap.dedent(CANDIDATES[name]).replace(
        "{outside!r}", repr(outside)).replace("{out_dir!r}", repr(out_dir))
    alt = [torch.randn(N + 7), torch.randn(N + 7)] if name == "honest" else None
    return run_candidate(name, root, source, "interpret", [_inputs(k) for k in range(TRIALS)],
                         alt_inputs=alt)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return run_all(CANDIDATES, _run_candidate, tmp_path_factory.mktemp("candidates"), workers=3)


_get = completed_run


FACT_KEYS = {"env", "sandboxed_view", "load", "construct", "trials", "alt", "launches",
             "aten_ops", "scalar_reads", "foreign_calls", "outputs", "input_mutation", "threads",
             "noop", "eval_mode", "timing", "tampering", "audit", "casts"}


def test_honest_candidate(results):
    r = _get(results, "honest")
    f = r.facts
    assert FACT_KEYS <= set(f), r.describe()
    assert f["load"] == {"ok": True, "error": None}
    assert f["construct"] == {"ok": True, "error": None}
    assert [t["ok"] for t in f["trials"]] == [True] * TRIALS, r.describe()
    assert all(t["launches"] == 1 for t in f["trials"])
    launches = f["launches"]
    assert launches["train"] == 1 and launches["eval"] == 1
    # trials + alt + repeat
    assert launches["forward_total"] == TRIALS + 2
    assert launches["by_kernel"] == {"add_kernel": TRIALS + 2}
    assert f["aten_ops"] == {"forward": {}, "eval": {}}
    assert f["scalar_reads"] == 0 and f["casts"] == {"downcasts": 0}
    assert f["foreign_calls"] == {}
    assert f["tampering"] == [] and f["audit"] == [], r.describe()
    assert f["threads"]["started"] == []
    assert f["input_mutation"] == {"detected": False, "trials": []}
    assert f["alt"] == {"ran": True, "ok": True, "error": None}
    assert f["noop"] == {"ran": True, "error": None}
    assert f["eval_mode"] == {"ran": True, "error": None}
    assert len(f["outputs"]) == TRIALS
    assert all(o["plain"] and o["problem"] is None and o["type"] == "torch.Tensor"
               for o in f["outputs"])
    for k in range(TRIALS):
        x, y = _inputs(k)
        assert torch.equal(r.load(f"actual_{k}.ctp"), x + y)
        assert torch.equal(r.load(f"timed_{k}_0.ctp"), x + y)
    assert r.load("actual_alt.ctp").shape == (N + 7,)
    assert torch.equal(r.load("actual_repeat.ctp"), r.load("actual_0.ctp"))
    noop = r.load("actual_noop.ctp")
    assert not torch.equal(noop, r.load("actual_0.ctp"))
    assert vp.count_poison(noop) == N  # the no-op kernel wrote nothing into the empty output
    inputs_after = r.load("inputs_after_0.ctp")
    assert all(torch.equal(a, b) for a, b in zip(inputs_after, _inputs(0)))
    timing = f["timing"]
    assert timing["error"] is None, r.describe()
    assert timing["reps"] >= 3 and timing["median_ms"] > 0
    assert len(timing["samples_ms"]) == timing["reps"]
    assert r.phases.index("timing-check-begin") < r.phases.index("timing-check-end")
    begin = next(m for m in r.messages if m.get("name") == "timing-check-begin")
    assert begin["reps"] == timing["check_reps"] == 2  # the job's bound
    assert r.messages[-1]["type"] == "facts"
    # every timed call guarded and counted; every output kept (small outputs) and written once
    # per slot because the kernel is deterministic
    assert launches["timed_min_per_call"] == 1
    assert launches["timed_calls"] == 1 + timing["reps"] + 1 + begin["reps"]
    assert timing["checked"]["kept"] == timing["reps"] and len(timing["fresh_ms"]) == TRIALS
    assert timing["rounds"] == 1 and timing["fresh_rounds_ms"] == [timing["fresh_ms"]]
    assert timing["checked"]["files"] == {str(k): 1 for k in range(TRIALS)}
    assert torch.equal(r.load("timed_check.ctp"), sum(_inputs(0)))
    recorder = f["aten_recorder"]
    assert recorder["ok"] and recorder["compute"] == {}, recorder
    assert recorder["forward_ranges"] == recorder["expected"] and recorder["disabled_seen"] == 0
    assert recorder["expected"]["timing"] == launches["timed_calls"]
    import hashlib
    for name, digest in f["files"].items():
        with open(os.path.join(r.out_dir, name), "rb") as fh:
            assert hashlib.sha256(fh.read()).hexdigest() == digest


def test_dynamo_imported_by_the_candidate_is_not_tampering(results):
    r = _get(results, "dynamo_later")
    f = r.facts
    assert [t["ok"] for t in f["trials"]] == [True] * TRIALS, r.describe()
    assert f["tampering"] == [], r.describe()


def test_timed_calls_are_watched_like_checked_ones(results):
    """A candidate that switches to torch once it counts itself into the timing loop, or once
    it sees the Python-level profiler gone, is seen there: its ATen work is recorded below the
    dispatch mode and every timed call must launch."""
    for name in ("torch_after_trials", "skip_launch_when_unprofiled"):
        f = _get(results, name).facts
        assert f["aten_ops"]["forward"] == {}, f["aten_ops"]
        assert f["aten_recorder"]["compute"]["timing"].get("aten::add"), f["aten_recorder"]
        assert "run" not in f["aten_recorder"]["compute"]
        assert f["launches"]["timed_min_per_call"] == 0


def test_aten_work_past_the_dispatch_mode_is_recorded_below_it(results):
    f = _get(results, "dispatch_disabled").facts
    assert f["aten_ops"]["forward"] == {}  # the dispatch mode never saw the addition
    compute = f["aten_recorder"]["compute"]
    assert compute["run"] == {"aten::add": TRIALS + 1} and compute["timing"]["aten::add"] > 0


def test_passthrough_counts_aten_compute(results):
    f = _get(results, "passthrough").facts
    assert f["aten_ops"]["forward"].get("aten::add.Tensor") == TRIALS + 1  # trials + repeat
    assert f["aten_ops"]["eval"] == {"aten::add.Tensor": 1}
    assert f["launches"]["forward_total"] == 0 and f["launches"]["train"] == 0
    # Where it happened: the candidate's line of the addition, for the flag to point at.
    line = (HEADER + CANDIDATES["passthrough"]).splitlines().index("        return x + y") + 1
    assert f["lines"]["forward"] == {str(line): TRIALS + 1}
    assert f["lines"]["eval"] == {str(line): 1}


def test_eval_mode_branch_is_seen_even_if_eval_is_overridden(results):
    f = _get(results, "eval_branch").facts
    assert f["launches"]["train"] == 1 and f["launches"]["eval"] == 0
    assert f["aten_ops"] == {"forward": {}, "eval": {"aten::add.Tensor": 1}}
    assert f["eval_mode"] == {"ran": True, "error": None}


def test_unwritten_empty_is_poisoned(results):
    r = _get(results, "half_written")
    out = r.load("actual_0.ctp")
    assert vp.count_poison(out) == N - N // 2
    x, y = _inputs(0)
    assert torch.equal(out[: N // 2], (x + y)[: N // 2])


def test_input_mutation_detected(results):
    r = _get(results, "mutates_input")
    f = r.facts
    assert f["input_mutation"]["detected"] is True
    assert f["input_mutation"]["trials"] == [{"trial": k, "inputs": [0]} for k in range(TRIALS)]
    after = r.load("inputs_after_0.ctp")
    assert torch.equal(after[0], torch.zeros(N)) and torch.equal(after[1], _inputs(0)[1])
    # the next trial still got pristine inputs
    x, y = _inputs(1)
    assert torch.equal(r.load("actual_1.ctp"), x + y)


def test_output_aliasing_an_input(results):
    f = _get(results, "aliases_input").facts
    assert [o["problem"] for o in f["outputs"]] == ["aliases input 0"] * TRIALS
    assert f["input_mutation"]["detected"] is True


def test_result_files_are_the_harness_alone(results):
    r = _get(results, "forge_files")
    f = r.facts
    # torch.save writes from C++ (no audit event): seen by the profiler during forward
    saves = [a for a in f["audit"] if a["event"] == "torch.save"]
    assert saves and saves[0]["category"] == "sandbox_violation", r.describe()
    assert saves[0]["line"] == r.line("MARK-SAVE") and "actual_1.ctp" in saves[0]["detail"]
    fds = [a for a in f["audit"] if a["event"] == "os.listdir"]
    assert fds and fds[0]["category"] == "harness_tampering" and fds[0]["line"] == r.line("MARK-FDS")
    maps = [a for a in f["audit"] if a["event"] == "torch.from_file"]
    assert maps and maps[0]["category"] == "sandbox_violation"
    # both result files were changed after the harness wrote them. Rewritten through a file
    # call: seen by the stage (its identity and times moved), reported and removed.
    changed = [t["what"] for t in f["tampering"]]
    name = "actual_1.ctp"
    assert f"result file {name} was changed after the harness wrote it" in changed
    assert not os.path.exists(os.path.join(r.out_dir, name)) and name not in f["files"]
    # Written through a shared mapping, which need not move the file's times: either seen the
    # same way, or left for the parent, whose check of every file against the digest the
    # harness took while writing it cannot miss it.
    name, path = "actual_0.ctp", os.path.join(r.out_dir, "actual_0.ctp")
    if f"result file {name} was changed after the harness wrote it" in changed:
        assert not os.path.exists(path) and name not in f["files"]
    else:
        with open(path, "rb") as file:
            assert hashlib.sha256(file.read()).hexdigest() != f["files"][name]
    assert "actual_repeat.ctp" in f["files"]
    with open(os.path.join(r.out_dir, "actual_repeat.ctp"), "rb") as file:
        assert hashlib.sha256(file.read()).hexdigest() == f["files"]["actual_repeat.ctp"]


def test_result_channel_is_out_of_reach(results):
    r = _get(results, "forge_channel")
    assert all("forged" not in json.dumps(m) for m in r.messages), r.describe()
    # The forger's write to the channel was refused (PermissionError out of forward, in the
    # first call after the timed ones), so it never reached os._exit and the real facts came
    # last; a timing that failed is not cross-checked.
    f = r.facts
    events = [a for a in f["audit"] if a["event"] == "os.write"]
    assert events and events[0]["category"] == "harness_tampering", r.describe()
    assert events[0]["line"] == r.line("MARK-FORGE")
    assert "PermissionError" in f["timing"]["error"]["message"]
    assert f["aten_ops"]["forward"].get("aten::add.Tensor")  # the passthrough is on record
    assert r.phases[-2:] == ["candidate-timing", "candidate-finish"], r.phases
    assert r.messages[-1]["type"] == "facts"


def test_timer_replacement_is_tampering(results):
    r = _get(results, "timer_patch")
    f = r.facts
    assert "time.perf_counter replaced" in [t["what"] for t in f["tampering"]], r.describe()
    gc_events = [a for a in f["audit"] if a["event"] == "gc.get_objects"]
    assert gc_events and gc_events[0]["category"] == "harness_tampering"
    assert gc_events[0]["line"] == r.line("MARK-GC")
    # the harness kept its own clock
    assert f["timing"]["error"] is None and f["timing"]["median_ms"] > 0


def test_socket_is_blocked_and_recorded(results):
    r = _get(results, "socket")
    f = r.facts
    events = [a for a in f["audit"] if a["category"] == "sandbox_violation"]
    assert events, r.describe()
    assert all(a["event"].startswith("socket.") for a in events)
    assert events[0]["line"] == r.line("MARK-SOCKET")
    x, y = _inputs(0)
    assert torch.equal(r.load("actual_0.ctp"), x + y)  # the candidate saw PermissionError


def test_write_outside_roots_is_blocked(results):
    r = _get(results, "writes_outside")
    f = r.facts
    assert not os.path.exists(os.path.join(r.root, "outside.txt"))
    trial = f["trials"][0]
    assert trial["ok"] is False and "PermissionError" in trial["error"]["message"]
    assert trial["error"]["line"] == r.line("MARK-WRITE")
    events = [a for a in f["audit"] if a["event"] == "open"]
    assert events and events[0]["category"] == "sandbox_violation"
    assert events[0]["line"] == r.line("MARK-WRITE")
    assert "outside.txt" in events[0]["detail"]


def test_thread_start_is_reported(results):
    r = _get(results, "thread")
    f = r.facts
    started = f["threads"]["started"]
    # one entry for the thread started on every call, with the count of starts
    assert [s["name"] for s in started] == ["crucible-test-helper"], r.describe()
    assert started[0]["line"] == r.line("MARK-THREAD")
    assert started[0]["count"] >= TRIALS and started[0]["alive"] is False
    events = [a for a in f["audit"] if a["category"] == "concurrency_escape"]
    assert events and events[0]["line"] == r.line("MARK-THREAD")
    # launches from the thread are still launches
    assert f["launches"]["train"] == 1


def test_tensor_subclass_output(results):
    f = _get(results, "subclass").facts
    assert {o["problem"] for o in f["outputs"]} == {"subclass"}
    assert all(o["plain"] is False and o["type"].endswith("Lazy") for o in f["outputs"])


def test_numpy_in_forward(results):
    f = _get(results, "numpy").facts
    calls = f["foreign_calls"]
    assert calls.get("numpy.dot", 0) >= TRIALS, calls
    assert calls.get("torch.Tensor.numpy", 0) >= 2 * TRIALS, calls
    assert calls.get("torch.from_numpy", 0) >= TRIALS, calls


def test_exception_in_forward_has_its_line(results):
    r = _get(results, "raises")
    f = r.facts
    for trial in f["trials"]:
        assert trial["ok"] is False
        assert trial["error"]["stage"] == "run"
        assert trial["error"]["message"] == "ValueError: boom"
        assert trial["error"]["line"] == r.line("MARK-RAISE")
    assert not os.path.exists(os.path.join(r.out_dir, "actual_0.ctp"))
    assert f["noop"]["error"]["line"] == r.line("MARK-RAISE")
    assert f["timing"]["error"]["stage"] == "timing"
    assert "timing-check-begin" not in r.phases  # nothing to cross-check


def test_sys_exit_in_forward_is_an_error_fact(results):
    r = _get(results, "exits")
    f = r.facts
    trial = f["trials"][0]
    assert trial["ok"] is False and trial["error"]["message"].startswith("SystemExit")
    assert trial["error"]["line"] == r.line("MARK-EXIT")
    assert f["eval_mode"]["ran"] is True and f["eval_mode"]["error"] is not None
    assert f["timing"]["error"] is not None
