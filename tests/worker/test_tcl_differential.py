"""Differential tests of the opencl backend: each module in tcl_kernels/ runs unchanged under the
`triton` shim (crucible_tcl on PoCL) and under the real Triton interpreter (TRITON_INTERPRET=1,
a subprocess: the shim shadows triton), and both are compared with each other and with PyTorch."""

import os
import pathlib
import subprocess
import sys

import pytest
import torch

REPO = pathlib.Path(__file__).resolve().parents[2]
SHIM = REPO / "core" / "worker" / "triton_shim"
KERNELS = pathlib.Path(__file__).resolve().parent / "tcl_kernels"

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from test_tcl_shim import _lib_available  # noqa: E402

pytestmark = pytest.mark.skipif(not _lib_available(), reason="crucible_tcl is not built")

SCRIPT = """
import sys, torch
sys.path.insert(0, sys.argv[1])
import {mod} as m
run = m.run()
wrong = getattr(m, "INTERPRETER_WRONG", lambda name: False)
torch.save({{"run": run, "expected": m.expected(),
            "interpreter_wrong": [n for n in run if wrong(n)]}}, sys.argv[2])
"""


def start_module(mod, tmp_path, interpret):
    """Runs `mod` in a subprocess (under the shim, or the interpreter); returns (process, out)."""
    out = tmp_path / f"{mod}_{'interp' if interpret else 'tcl'}.pt"
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    else:
        env["PYTHONPATH"] = str(SHIM)
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT.format(mod=mod), str(KERNELS), str(out)],
                            env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return proc, out


def finish_module(started, what):
    proc, out = started
    try:
        log, _ = proc.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    assert proc.returncode == 0, f"{what} failed:\n" + log.decode(errors="replace")[-6000:]
    return torch.load(out)


# The modules are split over two test files (one CTest each, so they run side by side and each
# stays well inside the suite's per-test timeout); test_tcl_differential_more.py takes the rest.
MODULES = ["argreduce", "carried_pointers", "matmul", "random_kernels", "scan_trans", "synth_style"]
OTHER_MODULES = sorted(p.stem for p in KERNELS.glob("*.py") if p.stem not in MODULES)


def tolerance(t):
    return {torch.float16: (2e-3, 2e-3), torch.bfloat16: (1.6e-2, 1e-2)}.get(t.dtype, (1e-4, 1e-4))


@pytest.mark.parametrize("mod", MODULES)
def test_kernels_match_interpreter_and_torch(mod, tmp_path):
    check_module(mod, tmp_path)


def check_module(mod, tmp_path):
    # both runs at once: the machine's cores are shared by the two processes
    ours_run, theirs_run = start_module(mod, tmp_path, False), start_module(mod, tmp_path, True)
    ours = finish_module(ours_run, f"{mod} on the opencl shim")
    theirs = finish_module(theirs_run, f"{mod} under the Triton interpreter")
    assert set(ours["run"]) == set(theirs["run"]) and set(ours["expected"]) <= set(ours["run"])
    for name, got in ours["run"].items():
        rtol, atol = tolerance(got)
        if name not in ours["interpreter_wrong"]:
            torch.testing.assert_close(got, theirs["run"][name], rtol=rtol, atol=atol, equal_nan=True, msg=name)
        if name in ours["expected"]:
            torch.testing.assert_close(got, ours["expected"][name], rtol=rtol, atol=atol, equal_nan=True, msg=name)
