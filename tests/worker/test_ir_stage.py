"""The ir stage (`crucible ir`): every kernel a candidate launches in one forward call, with the
text of each level its backend compiles it to. Each run goes the way the C++ side runs it:
`python -I -B worker.py ir JOB.json` in a subprocess, facts read from the result fd.

The opencl cases need CRUCIBLE_TCL_LIB (CMake sets it for the worker tests) or a build tree with
build/lib/libcrucible_tcl.so. The cuda case needs no GPU: without one the stage compiles the
captured launches for a default target.
"""
import json
import os
import subprocess
import sys

import torch

from candidate_runs import WORKER, _message, mark_line
from crucible_worker import value_pack as vp

CANDIDATE = """\
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale(x):
    return x * 2.0


@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)  # the load
    tl.store(out_ptr + offs, scale(x), mask=mask)  # the store


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        n = x.numel()
        double_kernel[(triton.cdiv(n, 256),)](x, out, n, BLOCK=256)
        double_kernel[(triton.cdiv(n, 128),)](x, out, n, BLOCK=128)
        double_kernel[(triton.cdiv(n, 128),)](x, out, n, BLOCK=128)
        return out
"""

ROW_MAX = """\
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_max_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=-float("inf"))
    tl.store(out_ptr, tl.max(x, axis=0))  # the max


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty(1)
        row_max_kernel[(1,)](x, out, x.numel(), BLOCK=1024)
        return out
"""

FAILING = """\
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        raise ValueError("no kernel today")  # the failure
"""


def run_ir(tmp_path, source, backend):
    """Runs the stage on `source` with one input of 1000 elements; its facts."""
    sandbox, inputs_dir, out_dir = (tmp_path / d for d in ("sandbox", "inputs", "out"))
    for d in (sandbox, inputs_dir, out_dir):
        d.mkdir()
    path = sandbox / "candidate.py"
    path.write_text(source)
    vp.save(str(inputs_dir / "init.ctp"), [])
    vp.save(str(inputs_dir / "inputs_0.ctp"), [torch.randn(1000)])
    job = {"candidate_path": str(path), "inputs_dir": str(inputs_dir), "out_dir": str(out_dir),
           "backend": backend, "seed": 42}
    job_path = tmp_path / "job.json"
    job_path.write_text(json.dumps(job))
    channel_path = tmp_path / "channel.jsonl"
    with open(channel_path, "wb") as channel:
        env = dict(os.environ, CRUCIBLE_RESULT_FD=str(channel.fileno()))
        env.pop("TRITON_INTERPRET", None)
        env["CUDA_VISIBLE_DEVICES"] = ""  # the cuda case runs as on a machine without a GPU
        completed = subprocess.run([sys.executable, "-I", "-B", WORKER, "ir", str(job_path)],
                                   pass_fds=(channel.fileno(),), env=env, cwd=sandbox,
                                   capture_output=True, text=True, timeout=600)
    messages = [_message(line) for line in channel_path.read_text().splitlines() if line.strip()]
    facts = [m["facts"] for m in messages if m.get("type") == "facts"]
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert facts, completed.stderr[-3000:]
    return facts[-1]


def test_opencl_reports_the_c_each_specialisation_compiles_to_with_its_python_lines(tmp_path):
    facts = run_ir(tmp_path, CANDIDATE, "opencl")
    assert facts["error"] is None, facts["error"]
    assert facts["compiled"] is True
    kernels = facts["kernels"]
    # BLOCK=256 and BLOCK=128: two specialisations; the repeated launch compiles nothing new.
    assert [k["name"] for k in kernels] == ["double_kernel", "double_kernel"]
    assert [k["specialization"].rsplit(", ", 1)[-1] for k in kernels] == ["BLOCK=256",
                                                                          "BLOCK=128"]
    kernel = kernels[0]
    assert kernel["def_line"] == mark_line(CANDIDATE, "def double_kernel")
    level = kernel["levels"][0]
    assert level["name"] == "opencl_c"
    c_lines = level["text"].splitlines()
    assert len(level["line_map"]) == len(c_lines)
    assert "__kernel void" in level["text"]
    store_line = mark_line(CANDIDATE, "# the store")
    # The load is fused into the store's loop: the C that reads x is the store's statement.
    assert _mapped(level, "(a_x_ptr + ") == {store_line}
    assert _mapped(level, "get_group_id(0)") == {mark_line(CANDIDATE, "tl.program_id")}
    assert level["line_map"][0] is None  # the prelude comes from no Python line
    mapped = {line for line in level["line_map"] if line is not None}
    assert all(kernel["def_line"] < line <= store_line for line in mapped)


def test_opencl_a_load_evaluated_ahead_of_a_store_keeps_its_own_line(tmp_path):
    # x is read again after the first store: its value is kept from before that store, on
    # lines that name the load's own line.
    source = CANDIDATE.replace(
        "  # the store\n", "  # the store\n    tl.store(out_ptr + offs, x, mask=mask)\n")
    facts = run_ir(tmp_path, source, "opencl")
    assert facts["error"] is None, facts["error"]
    level = facts["kernels"][0]["levels"][0]
    # Kept from before the store on lines naming the load; the first store still reads x fused.
    assert _mapped(level, "(a_x_ptr + ") == {mark_line(source, "# the load"),
                                             mark_line(source, "# the store")}


def _mapped(level, needle):
    """The Python lines of the C lines containing `needle`."""
    return {line for line, text in zip(level["line_map"], level["text"].splitlines())
            if needle in text}


def test_cuda_without_a_gpu_compiles_the_captured_launches_for_a_default_target(tmp_path):
    facts = run_ir(tmp_path, CANDIDATE, "cuda")
    assert facts["error"] is None, facts["error"]
    assert "without a device" in facts["note"]
    kernels = facts["kernels"]
    assert len(kernels) == 2, kernels
    kernel = kernels[0]
    assert kernel["error"] is None, kernel["error"]
    assert kernel["def_line"] == mark_line(CANDIDATE, "def double_kernel")
    assert [lv["name"] for lv in kernel["levels"]] == ["ttir", "ttgir", "llir", "ptx"]
    text = {lv["name"]: lv["text"] for lv in kernel["levels"]}
    load_line = mark_line(CANDIDATE, "# the load")
    # Locations in the candidate's own file, the helper inlined: the parsers' raw material.
    assert "tt.load" in text["ttir"]
    assert f'candidate.py":{load_line}:' in text["ttir"]
    assert f".loc\t1 {load_line} " in text["ptx"]
    assert "!DILocation(line: " + str(load_line) in text["llir"]


def test_cuda_without_a_gpu_compiles_kernels_calling_tritons_own_jit_functions(tmp_path):
    # tl.max is a @jit function of triton.language: the interpreter wraps it (and patches the
    # language while it runs), the compile afterwards must see Triton's own again.
    facts = run_ir(tmp_path, ROW_MAX, "cuda")
    assert facts["error"] is None, facts["error"]
    kernel = facts["kernels"][0]
    assert kernel["error"] is None, kernel["error"]
    ttir = kernel["levels"][0]["text"]
    assert "tt.reduce" in ttir
    assert f'candidate.py":{mark_line(ROW_MAX, "# the max")}:' in ttir


def test_interpret_compiles_nothing_and_says_so(tmp_path):
    facts = run_ir(tmp_path, CANDIDATE, "interpret")
    assert facts["error"] is None
    assert facts["compiled"] is False
    assert facts["kernels"] == []
    assert "compiles nothing" in facts["note"]


def test_a_candidate_that_fails_reports_its_line(tmp_path):
    facts = run_ir(tmp_path, FAILING, "interpret")
    assert facts["error"]["stage"] == "forward"
    assert "no kernel today" in facts["error"]["message"]
    assert facts["error"]["line"] == mark_line(FAILING, "# the failure")
