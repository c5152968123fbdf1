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


def run_module(mod, tmp_path, interpret):
    out = tmp_path / f"{mod}_{'interp' if interpret else 'tcl'}.pt"
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    else:
        env["PYTHONPATH"] = str(SHIM)
    subprocess.run([sys.executable, "-c", SCRIPT.format(mod=mod), str(KERNELS), str(out)],
                   check=True, env=env, cwd=tmp_path, timeout=600)
    return torch.load(out)


def tolerance(t):
    return {torch.float16: (2e-3, 2e-3), torch.bfloat16: (1.6e-2, 1e-2)}.get(t.dtype, (1e-4, 1e-4))


@pytest.mark.parametrize("mod", ["matmul", "random_kernels", "carried_pointers", "argreduce", "scan_trans", "synth_style"])
def test_kernels_match_interpreter_and_torch(mod, tmp_path):
    ours = run_module(mod, tmp_path, interpret=False)
    theirs = run_module(mod, tmp_path, interpret=True)
    assert set(ours["run"]) == set(theirs["run"]) and set(ours["expected"]) <= set(ours["run"])
    for name, got in ours["run"].items():
        rtol, atol = tolerance(got)
        if name not in ours["interpreter_wrong"]:
            torch.testing.assert_close(got, theirs["run"][name], rtol=rtol, atol=atol, equal_nan=True, msg=name)
        if name in ours["expected"]:
            torch.testing.assert_close(got, ours["expected"][name], rtol=rtol, atol=atol, equal_nan=True, msg=name)
