"""The pinned Python environment: versions, and Triton's interpreter working with this NumPy.

The interpreter runs kernels with NumPy; a loop whose bound is a runtime argument
(`for i in range(0, n, BLOCK)`) is the construct that breaks when the NumPy and Triton versions
do not fit together, so it is run here in a fresh process with TRITON_INTERPRET=1 set before
triton is imported (as the worker does for the `interpret` backend).
"""
import importlib.metadata
import json
import os
import subprocess
import sys

import torch

from crucible_worker import timing

PINNED = {"torch": "2.11.0", "triton": "3.6.0", "numpy": "2.3.5"}

RUNTIME_LOOP_KERNEL = """
import json
import numpy
import torch
import triton
import triton.language as tl


@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offsets, mask=offsets < n, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0))


results = {}
for n in (1000, 129, 64):  # not a multiple of BLOCK, just over one block, under one block
    x = torch.arange(n, dtype=torch.float32)
    out = torch.zeros(1)
    sum_kernel[(1,)](x, out, n, BLOCK=128)
    results[n] = out.item()
print(json.dumps({"kernel_type": type(sum_kernel).__name__, "numpy": numpy.__version__,
                  "sums": results}))
"""


def test_pinned_versions():
    assert torch.__version__.split("+")[0] == PINNED["torch"]
    for name in ("triton", "numpy"):
        assert importlib.metadata.version(name) == PINNED[name]
    env = timing.env_facts("cpu")
    assert env["torch"].split("+")[0] == PINNED["torch"]
    assert env["triton"] == PINNED["triton"] and env["numpy"] == PINNED["numpy"]
    assert env["python"] == "%d.%d.%d" % sys.version_info[:3]


def test_triton_interpreter_runs_a_runtime_bound_loop_with_this_numpy():
    env = dict(os.environ, TRITON_INTERPRET="1")
    done = subprocess.run([sys.executable, "-I", "-c", RUNTIME_LOOP_KERNEL], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["kernel_type"] == "InterpretedFunction"  # the interpreter really ran it
    assert result["numpy"] == PINNED["numpy"]
    assert result["sums"] == {str(n): float(n * (n - 1) // 2) for n in (1000, 129, 64)}
