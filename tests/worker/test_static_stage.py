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
        # standard-library helpers that hand back frames
        "import logging\ndef f():\n    return logging.currentframe()\n",
        "from logging import currentframe as here\ndef f():\n    return here()\n",
        "import traceback\ndef f():\n    return list(traceback.walk_stack(None))\n",
        "import traceback as tb\ndef f():\n    return tb.extract_stack()\n",
        "import traceback\ndef f():\n    return traceback.format_stack()\n",
        "import traceback\ndef f():\n    traceback.print_stack()\n",
        "import traceback\ndef f(t):\n    return traceback.StackSummary.extract(\n"
        "        traceback.walk_tb(t))\n",
        "import sys\ndef f():\n    return sys._current_exceptions()\n",
        "import warnings\ndef f():\n    return warnings._next_external_frame\n",
        "import faulthandler\nfaulthandler.dump_traceback()\n",
        "import threading\ndef f():\n    return threading._active\n",
        "def f():\n    return getattr(f, '__glob' + 'als__')\n",
        "_BACK = 'f_' + 'back'\ndef f(frame):\n    return getattr(frame, _BACK)\n",
        "import sys\ndef f():\n    return getattr(sys.exc_info()[2], 'tb_frame')\n",
        # the import machinery
        "import sys\nsys.path.insert(0, '/tmp/vendor')\n",
        "import sys\nsys.path.append('/tmp/vendor')\n",
        "import sys\nsys.path.extend(['/tmp/vendor'])\n",
        "import sys\nsys.path = ['/tmp/vendor']\n",
        "import sys\nsys.path[0] = '/tmp/vendor'\n",
        "import sys\nsys.path += ['/tmp/vendor']\n",
        "import sys\npaths = sys.path\npaths.insert(0, '/tmp/vendor')\n",
        "from sys import path\npath.append('/tmp/vendor')\n",
        "import sys\nsys.meta_path.insert(0, object())\n",
        "import site\nsite.addsitedir('/tmp/vendor')\n",
        "import importlib.util\nspec = importlib.util.spec_from_file_location('m', '/tmp/m.py')\n",
        "import pkgutil\nmods = list(pkgutil.iter_modules())\n",
        "import zipimport\nz = zipimport.zipimporter('/tmp/a.zip')\n",
        # names hidden from a reader
        "_BACK = 'kcab_f'[::-1]\ndef f(frame):\n    return getattr(frame, _BACK)\n",
        "def f(o):\n    return getattr(o, ''.join(chr(c) for c in (0x66, 0x5f)) + 'back')\n",
        "import base64\ndef f(o):\n    return getattr(o, base64.b64decode('Zl9iYWNr').decode())\n",
        "import builtins\n_RUN = 'cexe'[::-1]\ndef f(code):\n    getattr(builtins, _RUN)(code)\n",
        "import sys\n_GET = getattr(sys, 'emarfteg_'[::-1])\n",
        "import sys\ndef f(name):\n    return getattr(sys, name)\n",
        "def f(o):\n    return getattr(o, 'kcab_f'[::-1].translate({}))\n",
        "import operator\nback = operator.attrgetter('f_back')\n",
        # listing a watched module's members: the way to a name no string spells
        "def f():\n    return [n for n in dir(torch) if len(n) == 2]\n",
        "import sys\ndef f():\n    return vars(sys)\n",
        "def f():\n    return list(torch.__dict__)\n",
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

        class ModelNew(nn.Module):
            def forward(self, x):
                return host(x)
        ''',
        # math on tensor data read out first, or on a loop over the tensor
        '''
        import math

        class ModelNew(nn.Module):
            def forward(self, x):
                return torch.tensor([math.exp(v) for v in x.flatten().tolist()])
        ''',
        '''
        import math

        class ModelNew(nn.Module):
            def forward(self, x):
                total = 0.0
                for v in x.view(-1):
                    total += math.exp(v)
                return total
        ''',
        '''
        import math

        class ModelNew(nn.Module):
            def forward(self, x):
                peak = x.max().item()
                return math.exp(peak)
        ''',
        '''
        from scipy import special

        def host(x):
            return special.erf(x)

        class ModelNew(nn.Module):
            def forward(self, x):
                return host(x)
        ''',
        # ufuncs with out= on NumPy views made in __init__
        '''
        import numpy as np

        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.stage = torch.zeros(1024)
                self.view = self.stage.numpy()

            def forward(self, x):
                np.exp(self.view, out=self.view)
                return self.stage
        ''',
        # NumPy arithmetic through operators only, on arrays made in __init__
        '''
        import numpy as np

        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.buf = np.frombuffer(bytearray(4096), dtype=np.float32)

            def forward(self, x):
                self.buf *= 2
                return x
        ''',
        '''
        import numpy as np

        _BUF = np.zeros(1024, dtype=np.float32)

        class ModelNew(nn.Module):
            def forward(self, x):
                _BUF[: x.numel()] = x.view(-1)
                return torch.from_numpy(_BUF * 2)
        ''',
        '''
        import numpy as np

        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.arr = np.asarray(torch.zeros(16))

            def forward(self, x):
                return torch.from_numpy(self.arr.cumsum())
        ''',
        # aliases and lookups by name
        '''
        from numpy import exp as e

        class ModelNew(nn.Module):
            def forward(self, x):
                return torch.from_numpy(e(x))
        ''',
        '''
        import numpy

        class ModelNew(nn.Module):
            def forward(self, x):
                return getattr(numpy, "exp")(x)
        ''',
        # a shape helper applied to the tensor itself
        '''
        import numpy as np

        class ModelNew(nn.Module):
            def forward(self, x):
                return torch.from_numpy(np.sqrt(x))
        ''',
        # reached through a class that ModelNew builds
        '''
        import numpy as np

        class Helper:
            def run(self, x):
                return np.tanh(x)

        class ModelNew(nn.Module):
            def forward(self, x):
                return Helper().run(x)
        ''',
        # NumPy reached by names hidden from a reader
        '''
        import numpy as np

        _EXP = getattr(np, "pxe"[::-1])

        class ModelNew(nn.Module):
            def forward(self, x):
                return torch.from_numpy(_EXP(x))
        ''',
        '''
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.stage = torch.zeros(16)
                self.view = getattr(self.stage, "ypmun"[::-1])()

            def forward(self, x):
                self.view *= 2
                return self.stage
        ''',
        '''
        import numpy as np

        _FNS = [getattr(np, n[::-1]) for n in ("pxe", "edivid")]
        ''',
        # every function counts where names are looked up by computed strings
        '''
        import numpy as np

        def _hidden(x):
            return np.tanh(x)

        class ModelNew(nn.Module):
            def forward(self, x):
                return globals()["_hid" + "den"](x)
        ''',
        # filed away at import by module-level code or by a decorator
        '''
        import numpy as np

        _IMPLS = []

        def _impl(x):
            return np.tanh(x)

        _ = _IMPLS.append(_impl)

        class ModelNew(nn.Module):
            def forward(self, x):
                return _IMPLS[0](x)
        ''',
        '''
        import numpy as np

        _REGISTRY = {}

        def register(f):
            _REGISTRY[f.__name__] = f
            return f

        @register
        def _impl(x):
            return np.tanh(x)

        class ModelNew(nn.Module):
            def forward(self, x):
                return _REGISTRY["_impl"](x)
        ''',
    ],
    "host_transfer": [
        '''
        class ModelNew(nn.Module):
            def forward(self, x):
                return float(x.sum().item())
        ''',
        '''
        class ModelNew(nn.Module):
            def forward(self, x):
                return torch.tensor([v * 2 for v in x.tolist()])
        ''',
    ],
    "torch_internals": [
        "def f(x):\n    with torch._C._DisableTorchDispatch():\n        return x\n",
        "import torch as t\ndef f():\n    return t._C._ExcludeDispatchKeyGuard\n",
        "C = torch._C\ndef f():\n    return C._unset_dispatch_mode\n",
        "from torch._C import _DisableTorchDispatch\n",
        "from torch import _C\n",
        "import torch._C as C\n",
        "def f():\n    return getattr(torch, '_C')\n",
        "_NAME = '_' + 'C'\ndef f():\n    return getattr(torch, _NAME)\n",
        "def f():\n    return torch.__dict__['_C']\n",
        "def f():\n    return vars(torch)['_C']\n",
        "def f():\n    return __import__('torch')._C\n",
        "import sys\ndef f():\n    return sys.modules['torch']._C._DisableTorchDispatch\n",
        "import importlib\nC = importlib.import_module('torch._C')\n",
        "import sys\nC = sys.modules.get('torch._C')\n",
        "from torch.utils._python_dispatch import _disable_current_modes\n",
        "from torch.utils import _python_dispatch\n",
        "def f():\n    return torch.utils._python_dispatch._pop_mode_temporarily()\n",
        "def f():\n    return torch._ops.ops\n",
        "from torch._dispatch import python\n",
        "from torch.autograd.profiler import _disable_profiler\n",
        "def f():\n    torch.autograd._disable_profiler_legacy()\n",
        "import torch.autograd.profiler as prof\ndef f():\n    prof._disable_profiler()\n",
        "from torch.overrides import _pop_mode_temporarily\n",
        "lib = torch.library.Library('aten', 'IMPL')\n",
        "from torch import library\nlib = library.Library('aten', 'IMPL')\n",
        '''
        @torch.library.custom_op("mylib::twice", mutates_args=())
        def twice(x: torch.Tensor) -> torch.Tensor:
            return x * 2
        ''',
        "def f():\n    torch.ops.aten.add.default.py_impl(None)\n",
        # names hidden from a reader: folded, then judged like the attribute
        "_core = getattr(torch, 'C_'[::-1])\n_off = getattr(_core, 'hctapsiDhcroTelbasiD_'[::-1])\n",
        "def f():\n    return getattr(torch, ''.join(reversed('C_')))\n",
        "import codecs\ndef f():\n    return getattr(torch, codecs.decode('_P', 'rot13'))\n",
        "def f():\n    return getattr(torch, ''.join(map(chr, [95, 67])))\n",
        "def f():\n    return getattr(torch, bytes.fromhex('5f43').decode())\n",
        # a watched name in any string: the lookup may happen elsewhere
        "import functools\nG = functools.reduce(getattr, ['_C', '_DisableTorchDispatch'], torch)\n",
        "def fetch(owner, name):\n    return getattr(owner, name)\nG = fetch(torch, '_' + 'C')\n",
        # code written to a file (or exec'd) is parsed too, with or without imports
        "SOURCE = 'with torch.utils._python_dispatch._disable_current_modes():\\n    pass\\n'\n",
        """
        SOURCE = '''
        from torch.utils._python_dispatch import _disable_current_modes
        '''
        """,
    ],
    "launch_hook_compute": [
        '''
        @triton.heuristics({"BLOCK": lambda args: int(torch.sum(args["x_ptr"]).item())})
        @triton.jit
        def hk(x_ptr, BLOCK: tl.constexpr):
            tl.store(x_ptr, 0)
        ''',
        '''
        import numpy as np

        def _block(args):
            x = args["x_ptr"].numpy()
            args["out_ptr"].numpy()[...] = np.exp(x)
            return 128

        @triton.heuristics(values={"BLOCK": _block})
        @triton.jit
        def hk(x_ptr, out_ptr, BLOCK: tl.constexpr):
            tl.store(out_ptr, tl.load(x_ptr))
        ''',
        '''
        import triton as tr

        def _pick(args):
            return int(args["x_ptr"].abs().max())

        @tr.heuristics({"BLOCK": _pick})
        @tr.jit
        def hk(x_ptr, BLOCK: tl.constexpr):
            tl.store(x_ptr, 0)
        ''',
        '''
        _HEURISTICS = {"BLOCK": lambda args: args["x_ptr"].exp().shape[0]}

        @triton.heuristics(_HEURISTICS)
        @triton.jit
        def hk(x_ptr, BLOCK: tl.constexpr):
            tl.store(x_ptr, 0)
        ''',
        '''
        @triton.autotune(configs=[triton.Config({"B": 128})], key=["n"],
                         pre_hook=lambda nargs: nargs["out"].copy_(nargs["x"] * 2))
        @triton.jit
        def hk(x, out, n, B: tl.constexpr):
            tl.store(out, tl.load(x))
        ''',
        '''
        def _post(nargs, exception=None):
            nargs["out"][:] = nargs["x"] + 1

        @triton.autotune(configs=[triton.Config({"B": 128})], key=["n"], post_hook=_post)
        @triton.jit
        def hk(x, out, n, B: tl.constexpr):
            tl.store(out, tl.load(x))
        ''',
        '''
        @triton.autotune(configs=[triton.Config({"B": 128})], key=["n"],
                         post_hook=lambda nargs, exception=None: nargs["out"].zero_())
        @triton.jit
        def hk(x, out, n, B: tl.constexpr):
            tl.store(out, tl.load(x))
        ''',
        '''
        @triton.autotune(
            configs=[triton.Config({"B": 128}, pre_hook=lambda n: torch.exp(n["x"], out=n["out"]))],
            key=["n"])
        @triton.jit
        def hk(x, out, n, B: tl.constexpr):
            tl.store(out, tl.load(x))
        ''',
        '''
        import numpy as np

        def _prune(configs, named_args, **kwargs):
            np.copyto(named_args["out"].numpy(), np.tanh(named_args["x"].numpy()))
            return configs

        @triton.autotune(configs=[triton.Config({"B": 128})], key=["n"],
                         prune_configs_by={"early_config_prune": _prune})
        @triton.jit
        def hk(x, out, n, B: tl.constexpr):
            tl.store(out, tl.load(x))
        ''',
        '''
        def _estimate(x, out, n, B, **kwargs):
            out.add_(x)
            return 1.0

        @triton.autotune(configs=[triton.Config({"B": 128})], key=["n"],
                         prune_configs_by={"perf_model": _estimate, "top_k": 1})
        @triton.jit
        def hk(x, out, n, B: tl.constexpr):
            tl.store(out, tl.load(x))
        ''',
        # one level down: a helper the hook calls
        '''
        def _scale(t):
            t.mul_(2)
            return 64

        @triton.heuristics({"BLOCK": lambda args: _scale(args["x_ptr"])})
        @triton.jit
        def hk(x_ptr, BLOCK: tl.constexpr):
            tl.store(x_ptr, 0)
        ''',
        # a hook factory, and functools.partial
        '''
        def copy_from(name):
            return lambda nargs: nargs[name].copy_(nargs["x"].sigmoid())

        @triton.autotune(configs=[triton.Config({"B": 128}, pre_hook=copy_from("out"))],
                         key=["n"])
        @triton.jit
        def hk(x, out, n, B: tl.constexpr):
            tl.store(out, tl.load(x))
        ''',
        '''
        import functools

        def _fill(nargs, name):
            nargs[name][:] = nargs["x"].cumsum(0)

        @triton.autotune(configs=[triton.Config({"B": 128})], key=["n"],
                         pre_hook=functools.partial(_fill, name="out"))
        @triton.jit
        def hk(x, out, n, B: tl.constexpr):
            tl.store(out, tl.load(x))
        ''',
        "add_kernel.add_pre_run_hook(lambda *args, **kwargs: args[2].exp_())\n",
        '''
        def _metadata(grid, kernel, args):
            args["out"].data = args["x"].data
            return {}

        @triton.jit(launch_metadata=_metadata)
        def hk(x, out):
            tl.store(out, tl.load(x))
        ''',
        '''
        @triton.heuristics({"B": lambda args: (args["a"] @ args["b"]).shape[0]})
        @triton.jit
        def hk(a, b, B: tl.constexpr):
            tl.store(a, 0)
        ''',
        # hooks in a dict subclass, and methods fetched by hidden names
        '''
        class _Settled(dict):
            def __setitem__(self, key, value):
                if key not in self:
                    dict.__setitem__(self, key, value)

        def _block(args):
            x = getattr(args["x_ptr"], "ypmun"[::-1])()
            return 128

        @triton.heuristics(_Settled(BLOCK=_block))
        @triton.jit
        def hk(x_ptr, BLOCK: tl.constexpr):
            tl.store(x_ptr, 0)
        ''',
        '''
        @triton.heuristics({k: (lambda args: 128) for k in ("BLOCK",)})
        @triton.jit
        def hk(x_ptr, BLOCK: tl.constexpr):
            tl.store(x_ptr, 0)
        ''',
        '''
        _NAME = "dda"[::-1] + "_"

        @triton.heuristics({"B": lambda args: getattr(args["x_ptr"], _NAME)(1) and 128})
        @triton.jit
        def hk(x_ptr, B: tl.constexpr):
            tl.store(x_ptr, 0)
        ''',
        '''
        import math

        @triton.heuristics({"B": lambda args: int(math.exp(args["x_ptr"].item()))})
        @triton.jit
        def hk(x_ptr, B: tl.constexpr):
            tl.store(x_ptr, 0)
        ''',
    ],
    "raw_bytes": [
        "import pickle\n",
        "import struct as s\n",
        "from array import array\n",
        "import marshal\n",
        "import copyreg\n",
        "import shelve\n",
        "from _pickle import dumps\n",
        "import importlib\np = importlib.import_module('pick' + 'le')\n",
        "def f(x):\n    return x.untyped_storage().__reduce_ex__(2)\n",
        "def f(x):\n    return getattr(x, '__reduce_ex__')(2)\n",
        "def f(s):\n    return s.__reduce__()\n",
        "def f(a):\n    return a.tobytes()\n",
        '''
        class ModelNew(nn.Module):
            def forward(self, x):
                return torch.tensor(x.untyped_storage().tolist())
        ''',
        '''
        class ModelNew(nn.Module):
            def forward(self, x):
                storage = x.untyped_storage()
                return sum(storage[i] for i in range(4))
        ''',
        '''
        class ModelNew(nn.Module):
            def forward(self, x):
                return [b for b in x.untyped_storage()]
        ''',
        '''
        class ModelNew(nn.Module):
            def forward(self, x):
                return bytes(x.untyped_storage())
        ''',
        '''
        class ModelNew(nn.Module):
            def forward(self, x):
                return memoryview(x.numpy())
        ''',
        '''
        import copy

        class ModelNew(nn.Module):
            def forward(self, x):
                return copy.deepcopy(x.storage())
        ''',
        '''
        import io

        class ModelNew(nn.Module):
            def forward(self, x):
                buf = io.BytesIO()
                torch.save(x, buf)
                return buf.getvalue()
        ''',
        '''
        from io import BytesIO

        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.buf = BytesIO()

            def forward(self, x):
                torch.save(x, self.buf)
                return x
        ''',
        '''
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.raw = bytearray(4096)
                self.view = torch.frombuffer(self.raw, dtype=torch.float32)
        ''',
        "_REDUCE = '__xe_ecuder__'[::-1]\ndef f(s):\n    return getattr(s, _REDUCE)(2)\n",
        "_OVER_BYTES = getattr(torch, 'reffubmorf'[::-1])\n",
        "_View = type(memoryview(b''))\n",
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
        "import sys\npaths = list(sys.path)\nprint(sys.path[0])\n",
        "import sys\nsys.stdout.flush()\nout = sys.__stdout__\n",
        "import logging\nlog = logging.getLogger(__name__)\nlog.info('x')\n",
        "import warnings\nwarnings.warn('slow path')\n",
        "import os\nos.chdir('/tmp')\n",
        '''
        import traceback

        def f(x):
            try:
                return x + 1
            except RuntimeError:
                traceback.print_exc()
                raise
        ''',
        "def f(x):\n    return getattr(x, 'weight', None)\n",
        # names computed from runtime values, as honest modules build submodule names
        '''
        class Stack(nn.Module):
            def __init__(self, n, act="relu"):
                super().__init__()
                for i in range(n):
                    setattr(self, f"conv{i}", nn.Conv2d(3, 3, 1))
                self.act = getattr(torch.nn.functional, act)

            def forward(self, x, i=0):
                x = getattr(self, "conv" + str(i))(x)
                return getattr(torch, self.dtype_name, torch.float32), self.act(x)
        ''',
        "def f():\n    return getattr(torch, 'float16'), getattr(nn, 'ReLU')()\n",
        "def f(mode='eval'):\n    return torch.compile, 'compile', 'exec', mode\n",
        "import sys\ndef f():\n    return hasattr(sys, 'version_info'), dir()\n",
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
        # scalars read for a grid are host_transfer, not numpy_compute
        '''
        class ModelNew(nn.Module):
            def forward(self, x, n):
                rows = int(n.item())
                dims = x.new_tensor([1, 2]).tolist()
                return rows, dims
        ''',
        # math on Python numbers (a rotary table's frequency), NumPy shape helpers, dtypes
        '''
        import math
        import numpy as np

        class ModelNew(nn.Module):
            def __init__(self, dim=64, base=10000.0):
                super().__init__()
                self.freq = -math.log(base) / dim
                self.scale = np.float32(1.0) / math.sqrt(dim)
                self.fdt = np.dtype("float32")

            def forward(self, x):
                n = int(np.prod(x.shape))
                blocks = int(np.ceil(x.numel() / 1024))
                return n, blocks, math.exp(-1.0), math.pi
        ''',
        # helpers ModelNew never reaches: a self-check and a copied get_inputs
        '''
        import numpy as np

        def _close(a, b):
            return np.allclose(a.numpy(), b.numpy())

        def get_inputs():
            return [torch.from_numpy(np.random.rand(16, 16).astype(np.float32))]
        ''',
    ],
    "host_transfer": [
        '''
        def _unused(x):
            return x.item()
        ''',
        "def f(x):\n    return x.shape, x.numel(), list(x.shape)\n",
    ],
    "torch_internals": [
        "import torch._dynamo\ntorch._dynamo.config.suppress_errors = False\n",
        "def f(fn):\n    return torch.compiler.disable(fn)\n",
        "def f(fn):\n    return torch._dynamo.disable(fn)\n",
        "def f(x):\n    return torch.ops.aten.add(x, 1)\n",
        "from triton._C.libtriton import ir\n",
        '''
        class Conv(nn.Module):
            def __init__(self, c):
                super().__init__()
                self._C = c

            def forward(self, x):
                return x[:, : self._C]
        ''',
        "def f():\n    with torch.autograd.profiler.record_function('k'):\n        pass\n",
        '''
        class ModelNew(nn.Module):
            """Avoids torch internals such as torch._C; only Triton kernels."""
        ''',
        # strings that are settings or prose, not code
        "CONFIG = 'acc=fp32'\nNOTE = 'x = torch._C'\nLABEL = 'C'\n",
        '''
        USAGE = """
        Usage:
            model = ModelNew()
        """
        ''',
    ],
    "launch_hook_compute": [
        # the usual heuristics: sizes, strides, dtypes, pointers, math shape helpers
        '''
        import math

        @triton.heuristics({
            "EVEN": lambda args: args["n"] % args["BLOCK"] == 0,
            "BLOCK": lambda args: triton.next_power_of_2(args["n"]),
            "WARPS": lambda args: min(max(args["x_ptr"].numel() // 1024, 1), 8),
            "STRIDE": lambda args: args["x_ptr"].stride(0) * args["x_ptr"].element_size(),
            "HALF": lambda args: args["x_ptr"].dtype == torch.float16,
            "ALIGNED": lambda args: args["x_ptr"].data_ptr() % 16 == 0,
            "LOG": lambda args: math.ceil(math.log2(args["n"])),
            "ROWS": lambda args: args["x_ptr"].size(0) + args["x_ptr"].shape[1] + len(args),
            "TILES": lambda args: triton.cdiv(int(args["n"]), 128),
        })
        @triton.jit
        def hk(x_ptr, n, EVEN: tl.constexpr, BLOCK: tl.constexpr, WARPS: tl.constexpr,
               STRIDE: tl.constexpr, HALF: tl.constexpr, ALIGNED: tl.constexpr,
               LOG: tl.constexpr, ROWS: tl.constexpr, TILES: tl.constexpr):
            tl.store(x_ptr, 0)
        ''',
        # resets of outputs for atomics, reset_to_zero and restore_value
        '''
        def init_to_zero(name):
            return lambda nargs: nargs[name].zero_()

        @triton.autotune(
            configs=[triton.Config({"B": 128}, pre_hook=init_to_zero("out")),
                     triton.Config({"B": 256}, num_warps=8,
                                   pre_hook=lambda nargs: nargs["peak"].fill_(float("-inf"))),
                     triton.Config({"B": 512}, pre_hook=lambda nargs: nargs["out"].zero_())],
            key=["n"], reset_to_zero=["out"], restore_value=["x"],
            pre_hook=lambda nargs: nargs["count"].fill_(0))
        @triton.jit
        def hk(x, out, peak, count, n, B: tl.constexpr):
            tl.atomic_add(out, tl.load(x))
        ''',
        '''
        def _reset(nargs):
            nargs["out"][:] = 0
            nargs["total"] = nargs["n"] * 2

        @triton.autotune(configs=[triton.Config({"B": 128})], key=["n"], pre_hook=_reset)
        @triton.jit
        def hk(x, out, n, B: tl.constexpr):
            tl.atomic_add(out, tl.load(x))
        ''',
        # pruning by shared memory, and a perf model over sizes
        '''
        def _prune(configs, named_args, **kwargs):
            props = torch.cuda.get_device_properties(named_args["x"].device)
            room = getattr(props, "shared_memory_per_block_optin", 0)
            kept = []
            for config in configs:
                if config.kwargs["B"] * named_args["x"].element_size() <= room:
                    kept.append(config)
            return sorted(kept, key=lambda c: c.num_warps) or configs[:1]

        def _estimate(x, out, n, B, num_warps, num_stages, **kwargs):
            return triton.cdiv(n, B) * x.element_size() / num_warps

        @triton.autotune(configs=[triton.Config({"B": 128})], key=["n"],
                         prune_configs_by={"early_config_prune": _prune,
                                           "perf_model": _estimate, "top_k": 2})
        @triton.jit
        def hk(x, out, n, B: tl.constexpr):
            tl.store(out, tl.load(x))
        ''',
        # the tutorials' descriptor pre-hook and launch metadata
        '''
        def _descriptor_hook(nargs):
            nargs["desc_x"].block_shape = [nargs["BLOCK_M"], nargs["HEAD_DIM"]]

        def _metadata(grid, kernel, args):
            ret = {"name": f"{kernel.name} [n={args['n']}]"}
            ret["bytes"] = args["x"].element_size() * args["n"]
            return ret

        @triton.autotune(configs=[triton.Config({"BLOCK_M": 64}, pre_hook=_descriptor_hook)],
                         key=["n"])
        @triton.jit(launch_metadata=_metadata)
        def hk(desc_x, x, n, BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr):
            tl.store(x, 0)
        ''',
        # a helper a heuristic calls, doing integer work
        '''
        def _warps(n):
            return 8 if n.bit_length() > 12 else 4

        @triton.heuristics(values={"W": lambda args: _warps(args["n"])})
        @triton.jit
        def hk(x, n, W: tl.constexpr):
            tl.store(x, 0)
        ''',
    ],
    "raw_bytes": [
        '''
        import copy

        class Holder(nn.Module):
            def __init__(self, layer):
                super().__init__()
                self.layer = copy.deepcopy(layer)
        ''',
        '''
        class ModelNew(nn.Module):
            def forward(self, x, y):
                same = x.untyped_storage().data_ptr() == y.untyped_storage().data_ptr()
                size = x.untyped_storage().nbytes()
                return same, size
        ''',
        '''
        class ModelNew(nn.Module):
            def forward(self, x):
                tag = bytes("abc", "utf-8") + bytes(f"{x.numel()}", "ascii")
                return tag
        ''',
        "from numpy import *\ndef f():\n    return array([1, 2])\n",
        "array = [1, 2]\narray.append(3)\nstruct = {}\n",
        "def f(model):\n    torch.save(model.state_dict(), 'weights.pt')\n",
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
             "memoization", "host_transfer", "torch_internals", "launch_hook_compute",
             "raw_bytes"}
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



def test_code_held_in_strings_is_analysed_two_strings_deep(tmp_path):
    # A string of code is analysed as a candidate of its own, its findings at the string's
    # lines; code in a string inside that string too; a third level is not looked into.
    three = "import ctypes\nctypes.CDLL(None)\n"
    two = f"import ctypes\nTHREE = {three!r}\n"
    one = f"import ctypes\nTWO = {two!r}\n"
    source = HONEST + f"\nONE = {one!r}\n"
    facts = analyse(tmp_path, source)
    details = [o["detail"] for o in observed(facts, "introspection")]
    assert "code in a string: import ctypes" in details, details
    assert "code in a string: code in a string: import ctypes" in details, details
    assert not any(d.startswith("code in a string: " * 3) for d in details), details
