"""The candidate stage on the opencl backend: `import triton` lands on Crucible's shim
(core/worker/triton_shim) and kernels run through crucible_tcl on PoCL. Each candidate runs the
way the C++ side runs it (`python -I -B worker.py candidate JOB.json`, facts on the result fd);
the guards must count, attribute and no-op the shim's launches as they do real Triton's.

Needs CRUCIBLE_TCL_LIB (CMake sets it for the worker tests) or a build tree with
build/lib/libcrucible_tcl.so.
"""
import os
import subprocess
import sys
import textwrap

import pytest
import torch

from candidate_runs import REPO, completed_run, run_all, run_candidate
from crucible_worker import value_pack as vp

SHIM = os.path.join(REPO, "core", "worker", "triton_shim")
N = 1000
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


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 256})],
                 key=["n"], reset_to_zero=["out_ptr"])
@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)
"""

CANDIDATES = {
    "honest": """
class ModelNew(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = x.numel()
        add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, n, BLOCK=128)
        return out
""",
    "autotuned": """
class ModelNew(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = x.numel()
        scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n)
        return out
""",
    "passthrough": """
class ModelNew(nn.Module):
    def forward(self, x, y):
        return x + y
""",
    "out_of_bounds": """
@triton.jit
def shifted_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    nxt = tl.load(x_ptr + offs + 1)  # OOB-MARK: reads one past the end, unmasked
    tl.store(out_ptr + offs, tl.where(offs + 1 < n, nxt, 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = x.numel()
        shifted_kernel[(triton.cdiv(n, 128),)](x, out, n, BLOCK=128)
        return out
""",
    "unsupported": """
@triton.jit
def histogram_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x_ptr + offs[:, None] * BLOCK + offs[None, :])
    tl.store(out_ptr + offs[:, None] * BLOCK + offs[None, :], tl.histogram(a, 4))


class ModelNew(nn.Module):
    def forward(self, x, y):
        out = torch.empty(16, 16)
        histogram_kernel[(1,)](x, out, BLOCK=16)
        return out
""",
}


def _inputs(k):
    generator = torch.Generator().manual_seed(43 + k)
    return [torch.randn(N, generator=generator), torch.randn(N, generator=generator)]


def _run_candidate(name, root):
    # A private PoCL and program cache, so runs do not share compiled programs.
    env = {"HOME": root, "XDG_CACHE_HOME": os.path.join(root, "cache"),
           "CRUCIBLE_TCL_CACHE_DIR": None}
    return run_candidate(name, root, HEADER + textwrap.dedent(CANDIDATES[name]), "opencl",
                         [_inputs(k) for k in range(TRIALS)], env_extra=env)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return run_all(CANDIDATES, _run_candidate, tmp_path_factory.mktemp("opencl"), workers=2)


_get = completed_run


def test_honest_candidate_runs_on_the_shim(results):
    r = _get(results, "honest")
    f = r.facts
    assert f["env"]["triton"].endswith("crucible.opencl"), r.describe()
    assert f["load"] == {"ok": True, "error": None}, r.describe()
    assert [t["ok"] for t in f["trials"]] == [True] * TRIALS, r.describe()
    assert all(t["launches"] == 1 for t in f["trials"])
    launches = f["launches"]
    assert launches["train"] == 1 and launches["eval"] == 1
    assert launches["forward_total"] == TRIALS + 1  # trials + repeat
    assert launches["by_kernel"] == {"add_kernel": TRIALS + 1}
    # the shim's storage handling and the ctypes call are inside the launch
    assert f["aten_ops"] == {"forward": {}, "eval": {}}, r.describe()
    assert f["foreign_calls"] == {}
    assert f["tampering"] == [] and f["audit"] == [], r.describe()
    for k in range(TRIALS):
        x, y = _inputs(k)
        assert torch.allclose(r.load(f"actual_{k}.ctp"), x + y)
    noop = r.load("actual_noop.ctp")
    assert vp.count_poison(noop) == N  # the no-op launch wrote nothing into the empty output
    assert f["noop"] == {"ran": True, "error": None}
    assert f["timing"]["error"] is None and f["timing"]["median_ms"] > 0
    assert os.listdir(os.path.join(r.out_dir, "tcl-cache")), "compiled programs are cached"


def test_autotuned_launch_counts_once(results):
    r = _get(results, "autotuned")
    f = r.facts
    assert [t["ok"] for t in f["trials"]] == [True] * TRIALS, r.describe()
    # the benchmarking launches of both configs and reset_to_zero are inside the launch
    assert all(t["launches"] == 1 for t in f["trials"]), r.describe()
    assert f["launches"]["by_kernel"] == {"scale_kernel": TRIALS + 1}
    assert f["aten_ops"] == {"forward": {}, "eval": {}}, r.describe()
    assert torch.allclose(r.load("actual_0.ctp"), _inputs(0)[0] * 2)
    assert vp.count_poison(r.load("actual_noop.ctp")) == N


def test_passthrough_counts_aten_compute(results):
    f = _get(results, "passthrough").facts
    assert f["aten_ops"]["forward"].get("aten::add.Tensor") == TRIALS + 1
    assert f["aten_ops"]["eval"] == {"aten::add.Tensor": 1}
    assert f["launches"]["forward_total"] == 0 and f["launches"]["train"] == 0


def test_unsupported_construct_is_a_trial_error_with_its_line(results):
    r = _get(results, "unsupported")
    f = r.facts
    assert f["load"]["ok"], r.describe()
    errors = [t["error"] for t in f["trials"]]
    assert all(e is not None for e in errors), r.describe()
    message = errors[0]["message"]
    assert "CompilationError" in message and "tl.histogram is not supported" in message, message
    assert "line " in message, message


def test_out_of_bounds_load_is_reported_from_the_checked_first_trial(results):
    r = _get(results, "out_of_bounds")
    f = r.facts
    assert [t["ok"] for t in f["trials"]] == [True] * TRIALS, r.describe()
    events = f["out_of_bounds"]["events"]
    assert f["out_of_bounds"]["checked_trial"] == 0 and len(events) == 1, r.describe()
    e = events[0]
    source = HEADER + textwrap.dedent(CANDIDATES["out_of_bounds"])
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "OOB-MARK" in text)
    assert (e["kernel"], e["access"], e["argument"], e["line"]) == ("shifted_kernel", "load", "x_ptr", line)
    assert e["element_offset"] >= N and e["numel"] == N, e
    # the skipped load does not change the answer: the kernel masks the lane it feeds
    x = _inputs(0)[0]
    expected = torch.cat([x[1:], torch.zeros(1)])
    assert torch.equal(r.load("actual_0.ctp"), expected) and torch.equal(r.load("actual_1.ctp")[:-1], _inputs(1)[0][1:])


def test_honest_candidate_reports_no_out_of_bounds_access(results):
    assert _get(results, "honest").facts["out_of_bounds"] == {"checked_trial": 0, "events": []}


def test_shim_is_first_on_the_path_in_the_stage():
    """configure_environment: torch sees no triton; `import triton` gets the shim."""
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {os.path.join(REPO, "core", "worker")!r})
        from crucible_worker import candidate_stage
        candidate_stage.configure_environment({{"backend": "opencl"}})
        import triton, torch.utils._triton as tt
        assert sys.path[0] == {SHIM!r}, sys.path[:2]
        assert triton.__file__.startswith({SHIM!r}), triton.__file__
        assert not tt.has_triton_package()
        print("ok")
    """)
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)
    completed = subprocess.run([sys.executable, "-I", "-c", code], env=env,
                               capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0 and "ok" in completed.stdout, completed.stderr[-3000:]
