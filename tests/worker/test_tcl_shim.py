"""The `triton` shim + crucible_tcl on PoCL: the corpus kernels (vector add, relu, gelu, softmax)
against PyTorch and against the real Triton interpreter (a subprocess: the shim shadows triton)."""

import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import pytest
import torch

REPO = pathlib.Path(__file__).resolve().parents[2]
SHIM = REPO / "core" / "worker" / "triton_shim"
CORPUS = REPO / "tests" / "corpus" / "pass"


def _lib_available():
    if os.environ.get("CRUCIBLE_TCL_LIB"):
        return True
    return any((REPO / b / "lib" / "libcrucible_tcl.so").exists() for b in ("build", "build-debug"))


pytestmark = pytest.mark.skipif(not _lib_available(), reason="crucible_tcl is not built")

CASES = {
    "vector_add_masked": lambda m, x, y: (m(x, y), x + y),
    "vector_add_wrapper": lambda m, x, y: (m(x, y), x + y),
    "relu_autotuned": lambda m, x, y: (m(x), torch.relu(x)),
    "gelu_helper": lambda m, x, y: (m(x), torch.nn.functional.gelu(x, approximate="tanh")),
    "row_softmax": lambda m, x, y: (m(x), torch.softmax(x, dim=-1)),
}
SHAPES = {"row_softmax": [(37, 300), (4, 1024), (1, 5)], "default": [(1000,), (4096,), (3, 777)]}


# Run the same script with the shim (here) and with real Triton's interpreter (subprocess).
SCRIPT = r"""
import importlib.util, json, sys, torch
case, shapes, out = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
if len(sys.argv) > 5:  # the interpreter: autotuning without a GPU driver, as the worker does it
    sys.path.insert(0, sys.argv[5])
    import triton.runtime.autotuner as autotuner
    from crucible_worker.guards import _interpreter_autotuning
    _interpreter_autotuning(autotuner.Autotuner)
spec = importlib.util.spec_from_file_location(case, sys.argv[4])
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
model = m.ModelNew()
res = {}
for shape in shapes:
    g = torch.Generator().manual_seed(len(shape) * 1000 + shape[-1])
    x = torch.randn(*shape, generator=g); y = torch.randn(*shape, generator=g)
    r = model(x, y) if "add" in case else model(x)
    res["x".join(map(str, shape))] = r
torch.save(res, out)
"""


def _run(case, shapes, tmp_path, interpret):
    out = tmp_path / f"{case}_{'interp' if interpret else 'tcl'}.pt"
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    env = dict(os.environ)
    if interpret:
        env["TRITON_INTERPRET"] = "1"
        env.pop("PYTHONPATH", None)
        cmd = [sys.executable, str(script)]
    else:
        cmd = [sys.executable, "-c",
               f"import sys; sys.path.insert(0, {str(SHIM)!r}); sys.argv = sys.argv[1:]; "
               f"exec(open({str(script)!r}).read())", str(script)]
    extra = [str(REPO / "core" / "worker")] if interpret else []
    subprocess.run(cmd + [case, json.dumps(shapes), str(out), str(CORPUS / case / "candidate.py")] + extra,
                   check=True, env=env, cwd=tmp_path, timeout=300)
    return torch.load(out)


@pytest.mark.parametrize("case", sorted(CASES))
def test_corpus_kernel_matches_torch_and_interpreter(case, tmp_path):
    shapes = SHAPES.get(case, SHAPES["default"])
    ours = _run(case, shapes, tmp_path, interpret=False)
    theirs = _run(case, shapes, tmp_path, interpret=True)
    for shape in shapes:
        g = torch.Generator().manual_seed(len(shape) * 1000 + shape[-1])
        x = torch.randn(*shape, generator=g)
        y = torch.randn(*shape, generator=g)
        _, expected = CASES[case](lambda *a: None, x, y)
        key = "x".join(map(str, shape))
        got = ours[key]
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(got, theirs[key], rtol=1e-5, atol=1e-6)


def _shim():
    """Imports the shim in this process (the rest of the test session does not import triton)."""
    if str(SHIM) not in sys.path:
        sys.path.insert(0, str(SHIM))
    import triton
    assert "crucible" in triton.__version__, "the real triton was imported instead of the shim"
    return triton


def test_unsupported_construct_reports_line(tmp_path):
    src = tmp_path / "k_dot.py"
    src.write_text(
        "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(p, BLOCK: tl.constexpr):\n"
        "    r = tl.arange(0, BLOCK)\n    a = tl.load(p + r[:, None] * BLOCK + r[None, :])\n"
        "    c = tl.histogram(a, 4)\n    tl.store(p + r, c)\n")
    triton = _shim()
    spec = importlib.util.spec_from_file_location("k_dot", src)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    with pytest.raises(triton.CompilationError, match="line 8: tl.histogram is not supported by the opencl backend yet"):
        m.k[(1,)](torch.zeros(16, 16), BLOCK=16)


def test_int_specialisation_and_strided_views(tmp_path):
    """A view with a storage offset runs on the tensor's own memory (no copies)."""
    src = tmp_path / "k_scale.py"
    src.write_text(
        "import triton\nimport triton.language as tl\n\n@triton.jit\n"
        "def k(x, y, n, s, B: tl.constexpr):\n    o = tl.program_id(0) * B + tl.arange(0, B)\n"
        "    m = o < n\n    v = tl.load(x + o * s, mask=m, other=0.0)\n"
        "    tl.store(y + o, tl.where(v > 0, v * 2.0, tl.sigmoid(v)).to(tl.int32) % 7, mask=m)\n")
    _shim()
    spec = importlib.util.spec_from_file_location("k_scale", src)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    base = torch.randn(2 * 300 + 5) * 10
    x = base[5:]  # storage offset 5
    for s in (1, 2):  # s == 1 is specialised as a constexpr, s == 2 is a runtime i32
        n = 300
        y = torch.empty(n)
        m.k[(triton_cdiv(n, 64),)](x, y, n, s, B=64)
        v = x[: n * s : s]
        ref = torch.fmod(torch.where(v > 0, v * 2.0, torch.sigmoid(v)).to(torch.int32), 7).float()
        torch.testing.assert_close(y, ref)


def triton_cdiv(a, b):
    return (a + b - 1) // b
