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
    from crucible_worker.guards.launches import _interpreter_autotuning
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


def _kernels(tmp_path, name, source):
    """The module `name` made of `source` (kernels need a file: the shim reads their source)."""
    _shim()
    src = tmp_path / f"{name}.py"
    src.write_text("import triton\nimport triton.language as tl\n\n" + source)
    spec = importlib.util.spec_from_file_location(name, src)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def test_argmax_over_every_axis_of_a_2d_block(tmp_path):
    # Triton 3.6's own frontend rejects axis=None on a 2-D block (so no interpreter comparison);
    # the index is into the row-major flattened block, as torch.argmax(x) gives it.
    m = _kernels(tmp_path, "k_argall", """
@triton.jit
def k(x, out, kept, R: tl.constexpr, C: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    v = tl.load(x + offs)
    tl.store(out, tl.argmax(v, axis=None))
    tl.store(out + 1, tl.argmin(v))
    tl.store(out + 2, tl.max(v, axis=None, return_indices=True)[1])
    tl.store(kept + tl.arange(0, 1)[:, None] + tl.arange(0, 1)[None, :], tl.argmax(v, None, keep_dims=True))
""")
    g = torch.Generator().manual_seed(5)
    for R, C in ((4, 8), (16, 2)):
        x = torch.randint(-20, 20, (R, C), generator=g).float()  # ties: the first index wins
        out, kept = torch.empty(3, dtype=torch.int32), torch.empty(1, 1, dtype=torch.int32)
        m.k[(1,)](x, out, kept, R=R, C=C)
        assert out.tolist() == [int(x.argmax()), int(x.argmin()), int(x.argmax())]
        assert kept.item() == int(x.argmax())


@pytest.mark.parametrize("body, message", [
    ("    i = 0\n    while i < n:\n        i += 1\n        break\n",
     "line 9: break is not supported: Triton kernels have no break or continue"),
    ("    while True:\n        tl.store(p, 1.0)\n",
     "line 6: a while loop whose condition is always true (Triton has no break) is not supported"),
    ("    tl.atomic_max(h, 1.0)\n", "line 6: tl.atomic_max does not support fp16"),
    ("    tl.atomic_add(p, 1.0, sem=\"seq\")\n", "line 6: tl.atomic_add: unknown sem 'seq'"),
    ("    tl.store(p + tl.arange(0, 4), tl.reshape(tl.zeros((2, 4), tl.float32), (4,)))\n",
     "line 6: tl.reshape: cannot reshape a block of shape [2, 4] to [4]"),
    ("    tl.store(p, _looping(n))\n",
     "line 13: return inside a loop of a @jit helper (Triton does not allow it either) is not supported"),
    ("    tl.store(p, _two_kinds(n))\n",
     "line 21: the @jit helper returns fp32 here and i32 on another path"),
])
def test_unsupported_constructs_name_their_line(tmp_path, body, message):
    helpers = ("\n\n@triton.jit\ndef _looping(n):\n    for i in range(n):\n        if i > 2:\n"
               "            return i\n    return 0\n\n\n@triton.jit\ndef _two_kinds(n):\n"
               "    if n > 2:\n        return n + 1\n    return 2.5\n")
    m = _kernels(tmp_path, "k_bad", "@triton.jit\ndef k(p, h, n):\n" + body + helpers)
    triton = sys.modules["triton"]
    with pytest.raises(triton.CompilationError) as e:
        m.k[(1,)](torch.zeros(8), torch.zeros(8, dtype=torch.float16), 5)
    assert message in str(e.value), str(e.value)


def test_bounds_checked_mode_reports_the_first_out_of_bounds_access(tmp_path):
    m = _kernels(tmp_path, "k_oob", """
@triton.jit
def k(x, y, out, n, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x + offs, mask=mask, other=0.0)  # masked lanes are never checked
    b = tl.load(y + offs + SHIFT, mask=mask, other=0.0)
    tl.store(out + offs, a + b, mask=mask)
    tl.atomic_add(out + n + SHIFT * 0 + tl.program_id(0) * 0, 1.0)
""")
    from triton import runtime as rt
    x, y = torch.randn(100), torch.randn(100)
    base = torch.zeros(200)
    out = base[50:151]  # 100 outputs and one counter at out[100]; storage 200 from base
    rt.set_bounds_checked(True)
    try:
        rt.oob_events.clear()
        m.k[(4,)](x, y, out, 100, SHIFT=0, BLOCK=32)
        assert rt.oob_events == [], rt.oob_events
        torch.testing.assert_close(out[:100], x + y)
        assert out[100].item() == 4.0
        m.k[(4,)](x, y, out, 100, SHIFT=3, BLOCK=32)  # the last three lanes read y past its end
        assert len(rt.oob_events) == 1, rt.oob_events
        e = rt.oob_events[0]
        assert (e["kernel"], e["file"], e["line"], e["access"], e["argument"]) == ("k", "k_oob.py", 10, "load", "y")
        assert 100 <= e["element_offset"] <= 102 and e["numel"] == 100 and e["storage_elements"] == 100
        torch.testing.assert_close(out[:97], x[:97] + y[3:])
        torch.testing.assert_close(out[97:100], x[97:])  # the skipped loads read as 0
    finally:
        rt.set_bounds_checked(False)
        rt.oob_events.clear()
    m.k[(4,)](x, y, out, 100, SHIFT=3, BLOCK=32)  # unchecked again: nothing recorded
    assert rt.oob_events == []
    assert "tcl_chk" not in m.k.source(x, y, out, 100, SHIFT=3, BLOCK=32)


def test_bounds_checked_mode_sees_loads_a_where_discards(tmp_path):
    # `tl.where(mask, tl.load(p), other)` loads every lane in Triton (the GPU reads past the
    # end), though the fused C code only needs the chosen operand: the checked build evaluates both
    m = _kernels(tmp_path, "k_where", """
@triton.jit
def k(x, out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.where(offs < n, tl.load(x + offs), 0.0)
    tl.store(out + offs, v, mask=offs < n)
""")
    from triton import runtime as rt
    x, out = torch.randn(10), torch.empty(10)
    rt.set_bounds_checked(True)
    try:
        rt.oob_events.clear()
        m.k[(1,)](x, out, 10, BLOCK=16)
        assert [(e["line"], e["argument"], e["element_offset"] >= 10) for e in rt.oob_events] == [(8, "x", True)]
        torch.testing.assert_close(out, x)
    finally:
        rt.set_bounds_checked(False)
        rt.oob_events.clear()
