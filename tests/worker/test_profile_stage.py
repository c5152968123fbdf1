"""The profile stage (`crucible profile`'s worker half): launches in order with their lines,
timed on the job's backend or counted on Triton's interpreter. Each run is the real stage in a
subprocess (`python -I -B worker.py profile JOB.json`, facts on the result fd).

The counted figures are checked against figures worked out by hand from the kernels below
(profile_counter.py states the convention): a masked vector add of N float32 elements requests
3*N*4 bytes and does N FLOPs whatever its block size; a tiled tl.dot of M x K by K x N does
2*M*N*K FLOPs, and each of its programs loads its row of A tiles and its column of B tiles.
"""
import json
import os
import subprocess
import sys

import pytest
import torch

from candidate_runs import REPO, mark_line
from crucible_worker import value_pack as vp

WORKER = os.path.join(REPO, "core", "worker", "worker.py")
N = 1000  # not a multiple of the block: the last program's mask is partly false
M = K = NN = 32
TILE = 16

SOURCE = """\
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, T: tl.constexpr):
    rm = tl.program_id(0) * T + tl.arange(0, T)
    rn = tl.program_id(1) * T + tl.arange(0, T)
    rk = tl.arange(0, T)
    acc = tl.zeros((T, T), dtype=tl.float32)
    for k in range(0, K, T):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


class ModelNew(nn.Module):
    def forward(self, x, y, a, b):
        out = torch.empty_like(x)
        n = x.numel()
        add_kernel[(triton.cdiv(n, 128),)](x, y, out, n, BLOCK=128)  # LAUNCH-ADD
        c = torch.empty(a.shape[0], b.shape[1])
        grid = lambda meta: (a.shape[0] // meta["T"], b.shape[1] // meta["T"])
        matmul_kernel[grid](a, b, c, a.shape[0], b.shape[1], a.shape[1], T=16)  # LAUNCH-DOT
        return out, c
"""

BROKEN = """\
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y, a, b):
        raise ValueError("no kernel here")  # RAISES
"""


def _lib_available():
    if os.environ.get("CRUCIBLE_TCL_LIB"):
        return True
    return any(os.path.exists(os.path.join(REPO, b, "lib", "libcrucible_tcl.so"))
               for b in ("build", "build-debug"))


def _message(line):
    message = json.loads(line)
    if isinstance(message, dict) and "body" in message and "type" not in message:
        message = json.loads(message["body"])
    return message


def run_profile(root, source, backend, mode, **job_extra):
    """Writes the candidate, the inputs and a job under `root`, runs the stage; its facts."""
    root = str(root)
    sandbox, inputs_dir = os.path.join(root, "sandbox"), os.path.join(root, "inputs")
    out_dir = os.path.join(root, "out")
    for d in (sandbox, inputs_dir, out_dir):
        os.makedirs(d, exist_ok=True)
    path = os.path.join(sandbox, "candidate.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    torch.manual_seed(0)
    vp.save(os.path.join(inputs_dir, "init.ctp"), [])
    vp.save(os.path.join(inputs_dir, "inputs_0.ctp"),
            [torch.randn(N), torch.randn(N), torch.randn(M, K), torch.randn(K, NN)])
    job = dict({"candidate_path": path, "inputs_dir": inputs_dir, "out_dir": out_dir,
                "backend": backend, "mode": mode, "seed": 42, "threads": 1, "calls": 3,
                "warmup": 1}, **job_extra)
    job_path = os.path.join(root, "job.json")
    with open(job_path, "w", encoding="utf-8") as f:
        json.dump(job, f)
    channel_path = os.path.join(root, "channel.jsonl")
    with open(channel_path, "wb") as channel:
        env = dict(os.environ, CRUCIBLE_RESULT_FD=str(channel.fileno()))
        env.pop("TRITON_INTERPRET", None)
        completed = subprocess.run([sys.executable, "-I", "-B", WORKER, "profile", job_path],
                                   pass_fds=(channel.fileno(),), env=env, cwd=sandbox,
                                   capture_output=True, text=True, timeout=600)
    with open(channel_path, encoding="utf-8") as f:
        messages = [_message(line) for line in f if line.strip()]
    facts = [m["facts"] for m in messages if m.get("type") == "facts"]
    assert completed.returncode == 0 and facts, completed.stderr[-4000:]
    return facts[-1]


def _check_places(facts):
    launches = facts["launches"]
    assert [x["kernel"] for x in launches] == ["add_kernel", "matmul_kernel"]
    assert launches[0]["launch_line"] == mark_line(SOURCE, "LAUNCH-ADD")
    assert launches[1]["launch_line"] == mark_line(SOURCE, "LAUNCH-DOT")
    assert launches[0]["def_line"] == mark_line(SOURCE, "def add_kernel")
    assert launches[1]["def_line"] == mark_line(SOURCE, "def matmul_kernel")
    assert launches[0]["grid"] == [8, 1, 1]
    assert launches[1]["grid"] == [2, 2, 1]  # a callable grid, as it evaluated


def test_count_mode_counts_bytes_and_flops(tmp_path):
    facts = run_profile(tmp_path, SOURCE, "opencl", "count")
    assert facts["error"] is None, facts["error"]
    assert facts["backend"] == "interpret"  # counting always runs on the interpreter
    _check_places(facts)
    add, dot = facts["launches"]
    assert add["counted"] and dot["counted"]
    # The masked add: two loads and a store of N float32 elements, one add per element of the
    # block (8 programs of 128: the masked-off lanes compute too).
    assert add["bytes_read"] == 2 * N * 4
    assert add["bytes_written"] == N * 4
    assert add["flops"] == 8 * 128
    # The dot: 2*M*N*K; each of the 2x2 programs loads K/T tiles of A and of B and stores one.
    assert dot["flops"] == 2 * M * NN * K
    programs, steps = (M // TILE) * (NN // TILE), K // TILE
    assert dot["bytes_read"] == programs * steps * 2 * TILE * TILE * 4
    assert dot["bytes_written"] == M * NN * 4
    assert dot["programs"] == programs


def test_count_cap_reports_not_counted(tmp_path):
    facts = run_profile(tmp_path, SOURCE, "interpret", "count", count_cap_s=0)
    assert facts["error"] is None, facts["error"]
    for launch in facts["launches"]:
        assert launch["counted"] is False
        assert "counting stopped" in launch["reason"]
        assert launch["flops"] is None and launch["bytes_read"] is None


def test_time_mode_on_the_interpreter(tmp_path):
    facts = run_profile(tmp_path, SOURCE, "interpret", "time", calls=3)
    assert facts["error"] is None, facts["error"]
    _check_places(facts)
    assert facts["calls"] == 3 and facts["calls_matching"] == 3
    assert len(facts["forward_ms"]) == 3
    assert "interpreter" in facts["timer"]
    for launch in facts["launches"]:
        assert len(launch["ms"]) == 3 and all(ms > 0 for ms in launch["ms"])
    # Each launch is part of its forward call.
    assert sum(x["ms"][0] for x in facts["launches"]) <= facts["forward_ms"][0]


@pytest.mark.skipif(not _lib_available(), reason="crucible_tcl is not built")
def test_time_mode_on_opencl(tmp_path):
    facts = run_profile(tmp_path, SOURCE, "opencl", "time", calls=4)
    assert facts["error"] is None, facts["error"]
    _check_places(facts)
    assert "clFinish" in facts["timer"]
    assert facts["calls_matching"] == 4
    for launch in facts["launches"]:
        assert len(launch["ms"]) == 4 and min(launch["ms"]) > 0


def test_a_failing_candidate_names_its_line(tmp_path):
    facts = run_profile(tmp_path, BROKEN, "interpret", "time")
    assert facts["error"]["stage"] == "run"
    assert facts["error"]["line"] == mark_line(BROKEN, "RAISES")
    assert "no kernel here" in facts["error"]["message"]
    assert facts["launches"] == []


def test_private_inputs_are_removed_before_the_candidate_runs(tmp_path):
    facts = run_profile(tmp_path, SOURCE, "interpret", "count", private_inputs=True)
    assert facts["error"] is None
    assert os.listdir(os.path.join(tmp_path, "inputs")) == []


STATEFUL = SOURCE.replace("class ModelNew(nn.Module):\n", """class ModelNew(nn.Module):
    calls = 0

""").replace("        out = torch.empty_like(x)\n", """        out = torch.empty_like(x)
        type(self).calls += 1
        if type(self).calls % 2 == 0:
            add_kernel[(1,)](x, y, out, 1, BLOCK=128)  # LAUNCH-EXTRA
""")


def test_calls_that_launch_other_kernels_are_no_samples(tmp_path):
    # warmup 1 is call 1; the timed calls are 2 to 5, and the even ones launch a kernel more.
    facts = run_profile(tmp_path, STATEFUL, "interpret", "time", calls=4, warmup=1)
    assert facts["error"] is None, facts["error"]
    assert facts["calls"] == 4 and facts["calls_matching"] == 2
    assert [x["kernel"] for x in facts["launches"]] == ["add_kernel", "add_kernel",
                                                        "matmul_kernel"]
    assert facts["launches"][0]["launch_line"] == mark_line(STATEFUL, "LAUNCH-EXTRA")
    assert len(facts["forward_ms"]) == 2
    assert all(len(x["ms"]) == 2 for x in facts["launches"])


def test_a_compiled_kernel_launched_directly_is_named_and_placed_by_its_jit_function(tmp_path):
    # Candidates launch through the compiled kernel Triton made for an earlier launch; the
    # profile's rows must still name the kernel and its `def` line. A real compiled kernel is
    # made without a GPU by compiling for a default target, in a process of its own (the
    # interpreter must be off for that).
    (tmp_path / "kern.py").write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def scale(x, n, BLOCK: tl.constexpr):\n"
        "    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(x + o, tl.load(x + o, mask=o < n) * 2, mask=o < n)\n")
    script = (
        "import sys\n"
        "from triton.backends.compiler import GPUTarget\n"
        "from triton.compiler import ASTSource, compile\n"
        "import kern\n"
        "from crucible_worker.profile_launches import LaunchLog\n"
        "c = compile(ASTSource(kern.scale, {'x': '*fp32', 'n': 'i32', 'BLOCK': 'constexpr'},"
        " {(2,): 16}), target=GPUTarget('cuda', 90, 32))\n"
        "log = LaunchLog(kern.__file__)\n"
        "print(type(c).__name__, log._def_line(c), log._def_line(kern.scale))\n")
    env = dict(os.environ, TRITON_INTERPRET="0",
               PYTHONPATH=os.pathsep.join([str(tmp_path), os.path.join(REPO, "core", "worker")]))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["CompiledKernel", "6", "6"]
