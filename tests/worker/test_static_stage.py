"""The static stage: facts from Python's ast, never importing the analysed files."""
import textwrap

import pytest

from crucible_worker import static_stage

# An honest KernelBench-style candidate; snippets below are appended to it.
HONEST = '''
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


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        out = torch.empty_like(a)
        n = out.numel()
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
        add_kernel[grid](a, b, out, n, BLOCK=1024)
        return out
'''

REFERENCE = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a + b


batch_size = 16
dim = 16384


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
'''


def write(tmp_path, name, source):
    path = tmp_path / name
    if isinstance(source, bytes):
        path.write_bytes(source)
    else:
        path.write_text(textwrap.dedent(source))
    return str(path)


def analyse(tmp_path, source, reference=REFERENCE):
    job = {"candidate_path": write(tmp_path, "candidate.py", source)}
    if reference is not None:
        job["reference_path"] = write(tmp_path, "reference.py", reference)
    return static_stage.run(job, channel=None)["candidate"]


def observed(facts, kind):
    return [o for o in facts["observations"] if o["kind"] == kind]


def line_of(source, text):
    """1-based line of the first line of `source` (dedented) that contains `text`."""
    for number, line in enumerate(textwrap.dedent(source).splitlines(), 1):
        if text in line:
            return number
    raise AssertionError(f"{text!r} not in source")


# ---------------------------------------------------------------------------------------------
# Shape of the facts


def test_job_without_paths_gives_nulls():
    assert static_stage.run({}, channel=None) == {"reference": None, "candidate": None}


def test_honest_candidate_facts(tmp_path):
    facts = analyse(tmp_path, HONEST)
    assert facts == {
        "syntax_error": None,
        "model_new_line": line_of(HONEST, "class ModelNew"),
        "forward_line": line_of(HONEST, "def forward"),
        "model_new_bases": ["nn.Module"],
        "kernels": [{"name": "add_kernel", "line": line_of(HONEST, "def add_kernel"),
                     "autotuned": False, "stores": True}],
        "launches": [{"kernel": "add_kernel", "line": line_of(HONEST, "add_kernel[grid]")}],
        "observations": [],
    }


def test_reference_facts(tmp_path):
    facts = static_stage.run({"reference_path": write(tmp_path, "ref.py", REFERENCE)},
                             channel=None)
    assert facts["candidate"] is None
    assert facts["reference"] == {
        "syntax_error": None,
        "model_line": line_of(REFERENCE, "class Model"),
        "get_inputs_line": line_of(REFERENCE, "def get_inputs"),
        "get_init_inputs_line": line_of(REFERENCE, "def get_init_inputs"),
        "constants": {"batch_size": 16, "dim": 16384},
    }


def test_reference_constants(tmp_path):
    source = '''
    import torch
    batch_size = 16
    neg = -3
    scale = 1.5e-3
    flag = True
    total = batch_size * 4 + 2 ** 3
    half = dim_unknown = 7 // 2
    a, b = 1, -2.5
    hidden: int = 128
    hidden *= 2
    name = "text"
    huge = 2 ** 64
    bad = 1 / 0
    tensor = torch.randn(3)
    maybe = 3
    if flag:
        maybe = 4
    shadowed = 5
    for shadowed in range(2):
        pass
    as_int = int(1e4)
    '''
    ref = static_stage.run({"reference_path": write(tmp_path, "r.py", source)}, None)
    assert ref["reference"]["constants"] == {
        "batch_size": 16, "neg": -3, "scale": 1.5e-3, "flag": True, "total": 72, "half": 3,
        "dim_unknown": 3, "a": 1, "b": -2.5, "hidden": 256, "as_int": 10000}
    assert ref["reference"]["model_line"] is None
    assert ref["reference"]["get_inputs_line"] is None


def test_reference_syntax_error(tmp_path):
    ref = static_stage.run({"reference_path": write(tmp_path, "r.py", "x = 1\ndef f(:\n")},
                           None)["reference"]
    assert ref["syntax_error"]["line"] == 2
    assert ref["model_line"] is None and ref["constants"] == {}


# ---------------------------------------------------------------------------------------------
# Files that do not parse, or hardly


def test_syntax_error_line_and_column(tmp_path):
    source = "import torch\n\nclass ModelNew:\n    def forward(self, x)\n        return x\n"
    facts = analyse(tmp_path, source)
    error = facts["syntax_error"]
    assert error["line"] == 4
    assert isinstance(error["column"], int) and error["column"] >= 1
    assert error["message"]
    assert facts["model_new_line"] is None and facts["kernels"] == []
    assert facts["observations"] == []


def test_indentation_error_is_a_syntax_error(tmp_path):
    facts = analyse(tmp_path, "if True:\n    x = 1\n      y = 2\n")
    assert facts["syntax_error"]["line"] == 3


def test_non_utf8_bytes(tmp_path):
    facts = analyse(tmp_path, b"import torch\nx = 1\ny = '\xff\xfe'\n")
    error = facts["syntax_error"]
    assert error["line"] == 3 and error["column"] == 6
    assert "UTF-8" in error["message"] and "0xff" in error["message"]


def test_coding_cookie_is_honoured(tmp_path):
    source = "# -*- coding: latin-1 -*-\nclass ModelNew:\n    name = '\xe9'\n"
    facts = analyse(tmp_path, source.encode("latin-1"))
    assert facts["syntax_error"] is None and facts["model_new_line"] == 2


def test_unknown_coding_cookie(tmp_path):
    facts = analyse(tmp_path, b"# coding: no-such-codec\nx = 1\n")
    assert facts["syntax_error"] is not None
    assert isinstance(facts["syntax_error"]["line"], int)


def test_null_byte(tmp_path):
    facts = analyse(tmp_path, b"x = 1\ny = 2\x00\n")
    assert facts["syntax_error"]["line"] == 2


def test_empty_file(tmp_path):
    facts = analyse(tmp_path, "")
    assert facts["syntax_error"] is None
    assert facts["model_new_line"] is None and facts["forward_line"] is None
    assert facts["kernels"] == [] and facts["launches"] == [] and facts["observations"] == []


def test_missing_file_is_a_fact_not_a_crash(tmp_path):
    facts = static_stage.run({"candidate_path": str(tmp_path / "absent.py")}, None)
    assert facts["candidate"]["syntax_error"]["message"].startswith("cannot read")


def test_deeply_nested_expression_does_not_crash(tmp_path):
    source = "x = " + " + ".join(["1"] * 900) + "\nclass ModelNew:\n    pass\n"
    facts = analyse(tmp_path, source)
    assert facts["syntax_error"] is None and facts["model_new_line"] == 2
    too_deep = "x = " + " + ".join(["1"] * 100000) + "\n"
    assert analyse(tmp_path, too_deep)["syntax_error"] is not None


def test_analysed_file_is_never_executed(tmp_path):
    marker = tmp_path / "ran"
    source = f"open({str(marker)!r}, 'w').write('x')\nraise SystemExit(3)\n"
    facts = analyse(tmp_path, source)
    assert facts["syntax_error"] is None and not marker.exists()


# ---------------------------------------------------------------------------------------------
# Kernels and launches


def test_kernels_through_aliases(tmp_path):
    source = '''
    import triton as tr
    import triton.language as lang
    from triton import jit
    from triton import language as tl2


    @tr.jit
    def k1(p):
        lang.store(p, 1)


    @jit
    def k2(p):
        tl2.atomic_add(p, 1)


    @tr.jit(do_not_specialize=["n"])
    def k3(p, n):
        x = lang.load(p)


    def not_a_kernel(p):
        lang.store(p, 1)
    '''
    facts = analyse(tmp_path, source)
    assert [(k["name"], k["stores"]) for k in facts["kernels"]] == [
        ("k1", True), ("k2", True), ("k3", False)]
    assert facts["kernels"][0]["line"] == line_of(source, "def k1")


def test_autotune_and_heuristics(tmp_path):
    source = '''
    import triton
    import triton.language as tl


    @triton.autotune(configs=[triton.Config({"BLOCK": 128})], key=["n"])
    @triton.jit
    def tuned(p, n, BLOCK: tl.constexpr):
        tl.store(p, 0)


    @triton.heuristics({"EVEN": lambda args: args["n"] % 2 == 0})
    @triton.jit
    def guessed(p, n, EVEN: tl.constexpr):
        tl.store(p, 0)
    '''
    facts = analyse(tmp_path, source)
    assert [(k["name"], k["autotuned"]) for k in facts["kernels"]] == [
        ("tuned", True), ("guessed", False)]
    assert facts["kernels"][0]["line"] == line_of(source, "def tuned")


def test_stores_through_jit_helpers_and_descriptors(tmp_path):
    source = '''
    import triton
    import triton.language as tl
    from triton.language import store as st


    @triton.jit
    def _write(p, v):
        tl.store(p, v)


    @triton.jit
    def outer(p):
        _write(p, 1.0)


    @triton.jit
    def via_import(p):
        st(p, 1.0)


    @triton.jit
    def via_descriptor(desc):
        desc.store([0, 0], tl.zeros((16, 16), dtype=tl.float32))


    @triton.jit
    def reads_only(p):
        return tl.load(p)
    '''
    stores = {k["name"]: k["stores"] for k in analyse(tmp_path, source)["kernels"]}
    assert stores == {"_write": True, "outer": True, "via_import": True,
                      "via_descriptor": True, "reads_only": False}


def test_kernel_built_by_calling_the_decorator(tmp_path):
    source = '''
    import triton
    import triton.language as tl


    def _impl(p):
        tl.store(p, 1)


    impl_kernel = triton.jit(_impl)


    def go(p):
        impl_kernel[(1,)](p)
    '''
    facts = analyse(tmp_path, source)
    assert facts["kernels"] == [{"name": "impl_kernel", "line": line_of(source, "= triton.jit"),
                                 "autotuned": False, "stores": True}]
    assert facts["launches"] == [{"kernel": "impl_kernel", "line": line_of(source, "[(1,)]")}]


def test_kernel_stored_on_self(tmp_path):
    source = '''
    import triton
    import triton.language as tl


    def _impl(p):
        tl.store(p, 1)


    class Holder:
        def __init__(self):
            self.kernel = triton.autotune(configs=[], key=[])(triton.jit(_impl))

        def go(self, p):
            self.kernel[(1,)](p)
    '''
    facts = analyse(tmp_path, source)
    assert facts["kernels"] == [{"name": "kernel", "line": line_of(source, "self.kernel ="),
                                 "autotuned": True, "stores": True}]
    assert facts["launches"] == [{"kernel": "kernel", "line": line_of(source, "[(1,)]")}]


def test_other_jits_are_not_kernels(tmp_path):
    source = '''
    import numba
    import torch


    @numba.jit
    def f(x):
        return x


    @torch.jit.script
    def g(x):
        return x
    '''
    assert analyse(tmp_path, source)["kernels"] == []


def test_launch_forms(tmp_path):
    source = HONEST + textwrap.dedent('''

    import sys

    class Launcher(nn.Module):
        def __init__(self):
            super().__init__()
            self.k = add_kernel

        def forward(self, a, b, out):
            self.k[(4,)](a, b, out, 4, BLOCK=4)
            sys.modules[__name__].add_kernel[(4,)](a, b, out, 4, BLOCK=4)
            add_kernel.run(a, b, out, 4, BLOCK=4, grid=(1,), warmup=False)
            add_kernel.warmup(a, b, out, 4, BLOCK=4, grid=(1,))
            launcher = add_kernel[(2,)]
            launcher(a, b, out, 4, BLOCK=4)
            values = [1, 2]
            return values[0]
    ''')
    facts = analyse(tmp_path, source)
    lines = [launch["line"] for launch in facts["launches"]]
    assert all(launch["kernel"] == "add_kernel" for launch in facts["launches"])
    assert lines == [line_of(source, "add_kernel[grid]"), line_of(source, "self.k[(4,)]"),
                     line_of(source, "sys.modules[__name__]"), line_of(source, "add_kernel.run"),
                     line_of(source, "add_kernel.warmup"), line_of(source, "add_kernel[(2,)]")]


def test_main_block_is_not_part_of_the_module(tmp_path):
    source = HONEST + textwrap.dedent('''

    if __name__ == "__main__":
        import threading
        ref = Model()
        add_kernel[(1,)](1, 2, 3, 4, BLOCK=4)
    ''')
    facts = analyse(tmp_path, source)
    assert facts["observations"] == []
    assert len(facts["launches"]) == 1


def test_forward_assigned_and_bases_as_text(tmp_path):
    source = '''
    import torch


    def fwd(self, x):
        return x


    class ModelNew(torch.nn.Module):
        forward = fwd
    '''
    facts = analyse(tmp_path, source)
    assert facts["model_new_bases"] == ["torch.nn.Module"]
    assert facts["forward_line"] == line_of(source, "forward = fwd")


# ---------------------------------------------------------------------------------------------
# Observations: each kind, seen where it must be and not where honest code has lookalikes

BF16_SPLIT = """
@triton.jit
def split(p, hi_p, lo_p, w):
    v = tl.load(p)
    hi = v.to(tl.bfloat16)
    tl.store(hi_p, hi)
    rest = v - hi.to(tl.float32)
    tl.store(lo_p, tl.where(rest == rest, rest, 0.0).to(tl.bfloat16))
"""
BF16X3_CHAIN = """
@triton.jit
def product(a, a2, b, b2, c):
    acc = tl.zeros((16, 16), dtype=tl.float32)
    a_tile = tl.load(a)
    b_tile = tl.load(b)
    a_lo = tl.load(a2)
    b_lo = tl.load(b2)
    acc = tl.dot(a_lo, b_tile, acc)
    acc = tl.dot(a_tile, b_lo, acc)
    acc = tl.dot(a_tile, b_tile, acc)
    tl.store(c, acc)
"""
BF16_BUFFER = """
def parts(x):
    return torch.empty(x.shape, device=x.device, dtype=torch.bfloat16)
"""

MUST_OBSERVE = {
    "try_except": [
        '''
        def fast(x):
            try:
                return x + 1
            except Exception:
                return x
        ''',
        '''
        def fast(x):
            try:
                return x + 1
            except:
                pass
        ''',
        '''
        import contextlib

        def fast(x):
            with contextlib.suppress(RuntimeError):
                return x + 1
            return x
        ''',
        '''
        try:
            USE_TRITON = bool(torch.empty(1).add_(1))
        except Exception:
            USE_TRITON = False
        ''',
        '''
        def fast(x):
            try:
                import fast_ext
            except Exception:
                return x
            return fast_ext.run(x)
        ''',
        '''
        def fast(xs):
            for x in xs:
                try:
                    x.add_(1)
                except RuntimeError:
                    continue
        ''',
    ],
    "reference_model_use": [
        '''
        class Fallback(nn.Module):
            def __init__(self):
                super().__init__()
                self.ref = Model()
        ''',
        '''
        import reference
        ''',
        '''
        from reference import Model as M
        ''',
        '''
        from . import reference
        ''',
        '''
        import importlib
        ref = importlib.import_module("reference")
        ''',
    ],
    "threading": [
        "import threading\n",
        "from concurrent.futures import ThreadPoolExecutor\n",
        "import multiprocessing as mp\n",
        '''
        def go():
            s = torch.cuda.Stream()
            with torch.cuda.stream(s):
                pass
        ''',
        '''
        import os
        def go():
            os.fork()
        ''',
        "import asyncio\n",
        '''
        def go(f):
            return torch.jit.fork(f)
        ''',
    ],
    "timer_patch": [
        "torch.cuda.synchronize = lambda: None\n",
        "import time as t\nt.perf_counter = lambda: 0.0\n",
        "from torch import cuda\ncuda.Event.elapsed_time = lambda self, other: 0.001\n",
        "setattr(torch.cuda, 'synchronize', lambda: None)\n",
        "import sys\nsys.modules['time'] = None\n",
        "import builtins\nbuiltins.print = lambda *a: None\n",
        "from unittest import mock\nmock.patch('time.perf_counter', lambda: 0).start()\n",
        "torch.allclose = lambda *a, **k: True\n",
        "import sys\nsys.modules.update({'torch': None})\n",
        "torch.cuda.__dict__['synchronize'] = print\n",
        "t = torch.cuda\nt.synchronize = print\n",
    ],
    "introspection": [
        "import gc\ndef f():\n    return gc.get_objects()\n",
        "import sys\ndef f():\n    return sys._getframe(1).f_locals\n",
        "import inspect\ndef f():\n    return inspect.stack()\n",
        "import ctypes\n",
        "exec('x = 1')\n",
        "y = eval('1 + 1')\n",
        "m = __import__('os')\n",
        "import importlib\nm = importlib.import_module('json')\n",
        "b = __builtins__\n",
        "code = compile('1', 'f', 'eval')\n",
        "import sys\nharness = sys.modules['crucible_worker.main']\n",
        "def f(g):\n    return g.__globals__\n",
        "import sys\nsys.settrace(None)\n",
    ],
    "process_or_network": [
        "import subprocess\n",
        "import os\nos.system('ls')\n",
        "import socket\n",
        "import urllib.request\n",
        "from os import popen\n",
        "import os\ndef f():\n    os.execv('/bin/sh', ['sh'])\n",
        "import requests\n",
        "from http import client\n",
    ],
    "numpy_compute": [
        '''
        import numpy as np

        def host(x):
            return torch.from_numpy(np.exp(x.cpu().numpy()))
        ''',
        '''
        def host(x):
            return float(x.sum().item())
        ''',
        '''
        def host(x):
            return torch.tensor([v * 2 for v in x.tolist()])
        ''',
        '''
        import math

        def host(x):
            return math.exp(float(x))
        ''',
        '''
        from scipy import special

        def host(x):
            return special.erf(x)
        ''',
    ],
    "tensor_subclass": [
        "class Lazy(torch.Tensor):\n    pass\n",
        "from torch import Tensor\nclass Lazy(Tensor):\n    pass\n",
        "class Lazy(torch.Tensor):\n    pass\nclass Lazier(Lazy):\n    pass\n",
        '''
        class Proxy:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return func(*args)
        ''',
        "def f(x):\n    return torch.Tensor._make_subclass(torch.Tensor, x)\n",
        '''
        from torch.utils._python_dispatch import TorchDispatchMode

        class Mode(TorchDispatchMode):
            pass
        ''',
    ],
    "low_precision_cast": [
        "def f(x):\n    return x.half()\n",
        "def f(x):\n    return x.bfloat16()\n",
        "def f(x):\n    return x.to(torch.float16)\n",
        "def f(x):\n    return x.to(device='cpu', dtype=torch.bfloat16)\n",
        '''
        @triton.jit
        def k(p, q):
            tl.store(q, tl.load(p).to(tl.float16))
        ''',
        '''
        @triton.jit
        def k(p):
            acc = tl.zeros((16,), dtype=tl.float16)
            tl.store(p + tl.arange(0, 16), acc)
        ''',
        '''
        @triton.jit
        def k(a, b, c):
            tl.store(c, tl.dot(tl.load(a), tl.load(b), allow_tf32=True))
        ''',
        "torch.backends.cuda.matmul.allow_tf32 = True\n",
        # one TF32 product, and three that are not hi x hi + hi x lo + lo x hi
        """
        @triton.jit
        def k(a, b, c):
            acc = tl.dot(tl.load(a), tl.load(b), input_precision="tf32")
            tl.store(c, acc)
        """,
        """
        @triton.jit
        def k(a, b, c):
            x = tl.load(a)
            y = tl.load(b)
            acc = tl.zeros((16, 16), dtype=tl.float32)
            acc = tl.dot(x, y, acc, input_precision="tf32")
            acc = tl.dot(x, y, acc, input_precision="tf32")
            acc = tl.dot(x, y, acc, input_precision="tf32")
            tl.store(c, acc)
        """,
        "torch.set_float32_matmul_precision('high')\n",
        "def f(x):\n    with torch.autocast('cuda'):\n        return x\n",
        "LOW = torch.float16\ndef f(x):\n    return x.to(LOW)\n",
        "def f(x):\n    return tl.cast(x, tl.bfloat16)\n",
        "def f(x):\n    return torch.empty(x.shape, dtype=torch.float16)\n",
        # a bfloat16 split without the products that put the parts back together
        BF16_SPLIT + BF16_BUFFER,
        # the products, but lo is not the rest of hi's own source
        BF16_SPLIT.replace("rest = v - hi", "rest = w - hi") + BF16X3_CHAIN,
        # the products and the split, but another value cast to bfloat16 beside them
        BF16_SPLIT + BF16X3_CHAIN + "def f(x):\n    return x.to(tl.bfloat16)\n",
    ],
    "memoization": [
        '''
        import functools

        @functools.lru_cache(maxsize=None)
        def cached(n):
            return n
        ''',
        '''
        from functools import cache

        @cache
        def cached(n):
            return n
        ''',
        '''
        class Cached(nn.Module):
            def __init__(self):
                super().__init__()
                self.cache = {}

            def forward(self, x):
                if id(x) in self.cache:
                    return self.cache[id(x)]
                return x
        ''',
        '''
        _OUT = {}

        def run(x):
            key = (x.data_ptr(), x.shape)
            if key not in _OUT:
                _OUT[key] = x * 2
            return _OUT[key]
        ''',
        '''
        _OUT = {}

        def run(x):
            return _OUT.setdefault(tuple(x.shape), x)
        ''',
        '''
        class Cached(nn.Module):
            def forward(self, x):
                self.ptr = x.data_ptr()
                return x
        ''',
        '''
        class Cached(nn.Module):
            def forward(self, x):
                if x is self.last_x:
                    return self.last_out
                return x
        ''',
    ],
}

MUST_NOT_OBSERVE = {
    "try_except": [
        '''
        try:
            import triton_helpers
        except ImportError:
            triton_helpers = None
        ''',
        '''
        try:
            from triton.language.extra import libdevice
            HAS_LIBDEVICE = True
        except (ImportError, AttributeError):
            HAS_LIBDEVICE = False
        ''',
        '''
        try:
            import triton_helpers
        except:
            pass
        ''',
        '''
        def fast(x):
            try:
                return x + 1
            except RuntimeError as exc:
                print("failed", exc)
                raise
        ''',
        '''
        def fast(x):
            try:
                return x + 1
            except RuntimeError as exc:
                raise ValueError("bad input") from exc
            finally:
                pass
        ''',
        '''
        def fast(x):
            try:
                return x + 1
            finally:
                print("done")
        ''',
        '''
        def _libdevice():
            try:
                from triton.language.extra import libdevice
            except ImportError:
                from triton.language.math import libdevice
            return libdevice
        ''',
    ],
    "reference_model_use": [
        '''
        class Base(nn.Module):
            pass

        class ModelNew(Base):
            def forward(self, x):
                return super().forward(x)
        ''',
        '''
        from torch.nn import Module

        class ModelNew(Module):
            """Same as Model, in Triton."""
            def forward(self, x):
                return x
        ''',
        "import references_tools\nname = 'reference'\n",
        "Model_count = 1\nx = ModelNew\n",
    ],
    "threading": [
        "thread_count = 4\n",
        "import os\ncount = os.cpu_count()\n",
        "def f(x):\n    return x.to(torch.cuda.current_device())\n",
    ],
    "timer_patch": [
        "torch.backends.cudnn.benchmark = True\n",
        '''
        class Holder:
            def __init__(self):
                self.time = 0
                self.synchronize = None
        ''',
        "elapsed = 0.0\ntime_ms = elapsed\n",
        "torch.manual_seed(0)\n",
        "def f(self):\n    setattr(self, 'weight', None)\n",
        "def f(time, sys):\n    time.elapsed = 1.0\n    sys.ready = True\n",
    ],
    "introspection": [
        "def f(model):\n    model.eval()\n    return torch.compile(model)\n",
        "import re\npattern = re.compile('x')\n",
        "import gc\ngc.collect()\n",
        "import sys\nprint(sys.version)\n",
        "import importlib\n",
    ],
    "process_or_network": [
        "import os\npath = os.path.join('a', 'b')\n",
        "import os\nvalue = os.environ.get('X')\n",
        "socket_count = 1\n",
        "requests = []\nrequests.append(1)\nhttp = {}\nhttp.clear()\n",
    ],
    "numpy_compute": [
        '''
        import math

        class Scaled(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.scale = 1.0 / math.sqrt(d)

            def forward(self, x):
                grid = (math.ceil(x.numel() / 1024),)
                return x
        ''',
        '''
        import numpy as np

        TABLE = np.arange(16)
        ''',
        '''
        @triton.jit
        def k(p):
            x = tl.load(p)
            tl.store(p, tl.sum(x, axis=0))
        ''',
        '''
        import numpy as np

        def f(x):
            return x.size(0), x.numel(), x.dtype == np.float32
        ''',
    ],
    "tensor_subclass": [
        "def f(x):\n    return isinstance(x, torch.Tensor)\n",
        "class Holder(nn.Module):\n    pass\n",
        "def f(t: torch.Tensor) -> torch.Tensor:\n    return t\n",
    ],
    "low_precision_cast": [
        "def f(x):\n    if x.dtype == torch.float16:\n        return x\n    return x\n",
        "def f(x):\n    return x.to(torch.float32)\n",
        "def f(x, y):\n    return x.to(y.dtype)\n",
        "def f(x):\n    return x.to('cpu')\n",
        "def f(x):\n    with torch.autocast('cuda', enabled=False):\n        return x\n",
        "torch.backends.cuda.matmul.allow_tf32 = False\n",
        '''
        @triton.jit
        def k(p, q):
            tl.store(q, tl.load(p).to(tl.float32))
        ''',
        # tf32x3 written out over operands split beforehand (the synthesizer's convolutions)
        """
        @triton.jit
        def k(a, a2, b, b2, c):
            acc = tl.zeros((16, 16), dtype=tl.float32)
            for i in range(4):
                a_tile = tl.load(a + i)
                b_tile = tl.load(b + i)
                a_lo = tl.load(a2 + i)
                b_lo = tl.load(b2 + i)
                acc = tl.dot(a_lo, b_tile, acc, input_precision="tf32")
                acc = tl.dot(a_tile, b_lo, acc, input_precision="tf32")
                acc = tl.dot(a_tile, b_tile, acc, input_precision="tf32")
            tl.store(c, acc)
        """,
        "SUPPORTED = (torch.float16, torch.bfloat16)\n",
        # bf16x3 written out: fp32 split into bfloat16 hi and lo, three bf16 products, the
        # parts held in bfloat16 buffers (the synthesizer's GPU convolutions)
        BF16_SPLIT + BF16X3_CHAIN + BF16_BUFFER,
    ],
    "memoization": [
        '''
        class Buffered(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("cos", torch.zeros(128))

            def forward(self, x):
                return x * self.cos[: x.shape[0]]
        ''',
        '''
        class Embed(nn.Module):
            def forward(self, idx):
                return self.table[idx]
        ''',
        '''
        def f(x):
            seen = {}
            seen[x.shape] = x
            return seen
        ''',
        '''
        class Weighted(nn.Module):
            def forward(self, x):
                if self.bias is None:
                    return x
                return x + self.bias
        ''',
        "import functools\nadd_one = functools.partial(lambda a, b: a + b, 1)\n",
    ],
}


def _cases(table):
    return [pytest.param(kind, source, id=f"{kind}-{i}")
            for kind, sources in table.items() for i, source in enumerate(sources)]


@pytest.mark.parametrize("kind, snippet", _cases(MUST_OBSERVE))
def test_observed(tmp_path, kind, snippet):
    facts = analyse(tmp_path, HONEST + textwrap.dedent(snippet))
    assert facts["syntax_error"] is None
    found = observed(facts, kind)
    assert found, facts["observations"]
    for obs in found:
        assert isinstance(obs["line"], int) and obs["line"] > line_of(HONEST, "return out")
        assert obs["detail"]


@pytest.mark.parametrize("kind, snippet", _cases(MUST_NOT_OBSERVE))
def test_not_observed(tmp_path, kind, snippet):
    facts = analyse(tmp_path, HONEST + textwrap.dedent(snippet))
    assert facts["syntax_error"] is None
    assert observed(facts, kind) == [], facts["observations"]


def test_every_kind_is_covered():
    kinds = {"try_except", "reference_model_use", "threading", "timer_patch", "introspection",
             "process_or_network", "numpy_compute", "tensor_subclass", "low_precision_cast",
             "memoization"}
    assert set(MUST_OBSERVE) == kinds and set(MUST_NOT_OBSERVE) == kinds


# ---------------------------------------------------------------------------------------------
# Observations: details, lines and honest files as a whole


def test_details_name_what_was_seen(tmp_path):
    source = HONEST + textwrap.dedent('''
    import threading

    torch.cuda.synchronize = lambda: None


    class Helper:
        def run(self, x):
            try:
                return x + 1
            except Exception:
                return x
    ''')
    facts = analyse(tmp_path, source)
    by_kind = {o["kind"]: o for o in facts["observations"]}
    assert by_kind["timer_patch"] == {"kind": "timer_patch",
                                      "line": line_of(source, "synchronize ="),
                                      "detail": "torch.cuda.synchronize reassigned"}
    assert by_kind["threading"]["detail"] == "import threading"
    assert by_kind["try_except"]["line"] == line_of(source, "try:")
    assert "Helper.run" in by_kind["try_except"]["detail"]


def test_model_new_inheriting_the_reference(tmp_path):
    source = '''
    import torch.nn as nn
    from reference import Model


    class ModelNew(Model):
        def forward(self, x):
            return super().forward(x)
    '''
    facts = analyse(tmp_path, source)
    found = observed(facts, "reference_model_use")
    details = [o["detail"] for o in found]
    assert facts["model_new_bases"] == ["Model"]
    assert any("inherits from Model" in d for d in details)
    assert any("super().forward()" in d for d in details)
    assert any("imports the reference" in d for d in details)
    assert {o["line"] for o in found} == {line_of(source, "from reference"),
                                          line_of(source, "class ModelNew"),
                                          line_of(source, "super().forward")}


def test_reference_import_needs_the_reference_stem(tmp_path):
    job = {"candidate_path": write(tmp_path, "c.py", "import task_7\nimport reference\n"),
           "reference_path": write(tmp_path, "task_7.py", REFERENCE)}
    facts = static_stage.run(job, None)["candidate"]
    assert [o["line"] for o in observed(facts, "reference_model_use")] == [1]


def test_dynamic_code_is_introspection_and_reference_use(tmp_path):
    source = "import importlib\nref = importlib.import_module('reference')\nexec('1')\n"
    facts = analyse(tmp_path, source)
    assert [o["line"] for o in observed(facts, "introspection")] == [2, 3]
    assert [o["line"] for o in observed(facts, "reference_model_use")] == [2]


def test_low_precision_cast_is_reported_even_for_fp16_work(tmp_path):
    # The judge knows the reference's dtypes; the static stage reports every downcast.
    source = HONEST + "\ndef f(x):\n    return x.to(torch.float16)\n"
    found = observed(analyse(tmp_path, source), "low_precision_cast")
    assert [o["detail"] for o in found] == [".to(...) with torch.float16"]


def test_honest_softmax_with_helpers(tmp_path):
    source = '''
    import math
    import torch
    import torch.nn as nn
    import triton
    import triton.language as tl

    try:
        from triton.language.extra import libdevice  # noqa: F401
    except ImportError:
        libdevice = None


    @triton.jit
    def _row_max(x):
        return tl.max(x, axis=0)


    @triton.jit
    def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf"))
        x = x - _row_max(x)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_stride + cols, num / tl.sum(num, axis=0), mask=mask)


    def _block_size(n):
        return triton.next_power_of_2(n)


    def softmax(x):
        rows, cols = x.shape
        y = torch.empty_like(x)
        softmax_kernel[(rows,)](y, x, x.stride(0), y.stride(0), cols, BLOCK=_block_size(cols))
        return y


    class ModelNew(nn.Module):
        def __init__(self, dim=64):
            super().__init__()
            self.linear = nn.Linear(dim, dim)  # a weight container only
            self.scale = 1.0 / math.sqrt(dim)

        def forward(self, x):
            if x.dtype == torch.float16:
                x = x.float()
            w = self.linear.weight
            return softmax(x * self.scale) + 0 * w.sum()
    '''
    facts = analyse(tmp_path, source)
    assert facts["observations"] == []
    assert [k["name"] for k in facts["kernels"]] == ["_row_max", "softmax_kernel"]
    assert [k["stores"] for k in facts["kernels"]] == [False, True]
    assert [launch["kernel"] for launch in facts["launches"]] == ["softmax_kernel"]


def test_observations_are_sorted_and_unique(tmp_path):
    source = "import threading\nimport threading\nimport subprocess, threading\n"
    facts = analyse(tmp_path, source)
    keys = [(o["line"], o["kind"]) for o in facts["observations"]]
    assert keys == [(1, "threading"), (2, "threading"), (3, "process_or_network"),
                    (3, "threading")]
