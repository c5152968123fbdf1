"""The shim's runtime: @jit, launch, specialisation, the ctypes bridge to crucible_tcl, autotune
and heuristics (simple versions)."""

import ast
import ctypes
import inspect
import json
import os
import pathlib
import textwrap
import time

_LAUNCH_OPTIONS = {"num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "stream",
                   "launch_cooperative_grid", "warmup", "debug"}

_TORCH_DTYPES = {
    "torch.float32": "fp32", "torch.float16": "fp16", "torch.bfloat16": "bf16",
    "torch.float64": "fp64",
    "torch.int32": "i32", "torch.int64": "i64", "torch.int16": "i16", "torch.int8": "i8",
    "torch.bool": "i1", "torch.uint8": "i8", "torch.uint32": "u32", "torch.uint64": "u64",
}


# ---- the C library ----------------------------------------------------------------------------

class _TclArg(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int32), ("reserved", ctypes.c_int32), ("base", ctypes.c_uint64),
                ("nbytes", ctypes.c_uint64), ("offset", ctypes.c_uint64), ("i", ctypes.c_int64),
                ("f", ctypes.c_double)]


_ARG_KIND = {"ptr": 0, "i32": 1, "i64": 2, "fp32": 3, "i1": 4}
_lib = None

# ---- bounds-checked mode ----------------------------------------------------------------------
# Kernels compiled checked test every load, store and atomic against the storage of the tensor
# argument its address derives from; an access outside it is skipped (loads give 0) and the
# first one per launch is recorded here instead of touching memory (docs/TCL.md).
_checked = os.environ.get("CRUCIBLE_TCL_CHECKED", "") not in ("", "0")
MAX_OOB_EVENTS = 16
oob_events = []


def set_bounds_checked(on):
    """Compile and launch the following kernels bounds-checked (True) or not."""
    global _checked
    _checked = bool(on)


def bounds_checked():
    return _checked


def _record_oob(kernel, fn, report, runtime, bound, grid):
    """One out-of-bounds report of a launch, in the tensor's terms."""
    event = {"kernel": kernel, "file": os.path.basename(inspect.getsourcefile(fn) or "<kernel>"),
             "line": report.get("line"), "access": report.get("access"), "grid": list(grid)}
    index = report.get("param", -1)
    if 0 <= index < len(runtime):
        name = runtime[index][0]
        t = bound[name]
        size = t.element_size()
        event["argument"] = name
        event["element_offset"] = (report["byte_offset"] - t.storage_offset() * size) // size
        event["numel"] = t.numel()
        event["storage_elements"] = t.untyped_storage().nbytes() // size
    if len(oob_events) < MAX_OOB_EVENTS:
        oob_events.append(event)


def _find_library():
    env = os.environ.get("CRUCIBLE_TCL_LIB")
    if env:
        return env
    here = pathlib.Path(__file__).resolve()
    for root in here.parents:
        for build in ("build", "build-debug"):
            cand = root / build / "lib" / "libcrucible_tcl.so"
            if cand.exists():
                return str(cand)
    raise RuntimeError("libcrucible_tcl.so not found: set CRUCIBLE_TCL_LIB or build the repository")


def _library():
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(_find_library())
        lib.tcl_compile.restype = ctypes.c_void_p
        lib.tcl_compile.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
        lib.tcl_kernel_source.restype = ctypes.c_char_p
        lib.tcl_kernel_source.argtypes = [ctypes.c_void_p]
        lib.tcl_kernel_line_map.restype = ctypes.c_char_p
        lib.tcl_kernel_line_map.argtypes = [ctypes.c_void_p]
        lib.tcl_launch.restype = ctypes.c_int
        lib.tcl_launch.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64),
                                   ctypes.POINTER(_TclArg), ctypes.c_size_t, ctypes.c_char_p,
                                   ctypes.c_size_t]
        lib.tcl_free.argtypes = [ctypes.c_void_p]
        _lib = lib
    return _lib


# ---- syntax trees -----------------------------------------------------------------------------

def _dump(node):
    """Python's ast, generically: {"_type": class name, every field, lineno}."""
    if isinstance(node, ast.AST):
        d = {"_type": type(node).__name__}
        for f in node._fields:
            d[f] = _dump(getattr(node, f, None))
        if hasattr(node, "lineno"):
            d["lineno"] = node.lineno
        return d
    if isinstance(node, list):
        return [_dump(x) for x in node]
    if isinstance(node, bool) or node is None or isinstance(node, str):
        return node
    if isinstance(node, int):
        return node if -(2 ** 63) <= node < 2 ** 64 else {"$unsupported": repr(node)}
    if isinstance(node, float):
        return {"$float": repr(node)}
    return {"$unsupported": repr(node)}


def _const_json(v):
    from . import language as tl
    if isinstance(v, tl.constexpr):
        v = v.value
    if isinstance(v, tl.dtype):
        return {"$dtype": v.triton_name}
    if isinstance(v, bool) or v is None or isinstance(v, (int, str)):
        return v
    if isinstance(v, float):
        return {"$float": repr(v)}
    if isinstance(v, (tuple, list)):
        return [_const_json(x) for x in v]
    raise TypeError(f"unsupported constexpr value {v!r}")


def _global_json(value):
    import types
    from . import language as tl
    if isinstance(value, types.ModuleType):
        name = value.__name__
        if name == "triton" or name.startswith("triton."):
            return {"module": name}
        return None
    if isinstance(value, JITFunction):
        return {"jit": value.key}
    if isinstance(value, (bool, int, float, tl.constexpr, tl.dtype)):
        return {"value": _const_json(value)}
    if callable(value) and getattr(value, "__module__", "").startswith("triton.language"):
        return {"builtin": value.__name__}
    return None


# ---- @jit -------------------------------------------------------------------------------------

class JITFunction:
    def __init__(self, fn, do_not_specialize=None):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.key = f"{fn.__name__}"
        self.src = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(self.src)
        ast.increment_lineno(tree, fn.__code__.co_firstlineno - 1)
        fdef = tree.body[0]
        fdef.decorator_list = []
        self.fdef = fdef
        self.arg_names = [a.arg for a in fdef.args.args]
        self.constexprs = {a.arg for a in fdef.args.args
                           if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)}
        self.do_not_specialize = set(do_not_specialize or [])
        self._kernels = {}
        self._tree_json = None

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"{self.__name__} is a @triton.jit kernel: launch it as "
                           f"{self.__name__}[grid](...)")

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, **kwargs)

    # The functions (this one and the @jit helpers it reaches) and the globals they use.
    def _closure(self):
        functions, globals_ = {}, {}
        todo = [self]
        while todo:
            f = todo.pop()
            if f.key in functions:
                continue
            functions[f.key] = _dump(f.fdef)
            names = {n.id for n in ast.walk(f.fdef) if isinstance(n, ast.Name)}
            scope = dict(f.fn.__globals__)
            if f.fn.__closure__:
                scope.update(zip(f.fn.__code__.co_freevars,
                                 (c.cell_contents for c in f.fn.__closure__)))
            for n in names:
                if n in scope and n not in globals_:
                    g = _global_json(scope[n])
                    if g is not None:
                        globals_[n] = g
                        if "jit" in g:
                            todo.append(scope[n])
        return functions, globals_

    def _specialize(self, name, value):
        """(spec json, runtime kind or None) for one argument, like Triton's specialisation."""
        from . import language as tl
        if name in self.constexprs:
            return {"kind": "constexpr", "value": _const_json(value)}, None
        if hasattr(value, "data_ptr") and hasattr(value, "dtype"):
            dt = _TORCH_DTYPES.get(str(value.dtype))
            if dt is None:
                raise TypeError(f"argument {name}: unsupported tensor dtype {value.dtype}")
            return {"kind": "ptr", "dtype": dt}, "ptr"
        if value is None or isinstance(value, (tl.dtype, tl.constexpr)):
            return {"kind": "constexpr", "value": _const_json(value)}, None
        if isinstance(value, bool):
            return {"kind": "i1"}, "i1"
        if isinstance(value, int):
            if value == 1 and name not in self.do_not_specialize:
                return {"kind": "constexpr", "value": 1}, None
            return (({"kind": "i32"}, "i32") if -(2 ** 31) <= value < 2 ** 31
                    else ({"kind": "i64"}, "i64"))
        if isinstance(value, float):
            return {"kind": "fp32"}, "fp32"
        raise TypeError(f"argument {name}: unsupported type {type(value).__name__}")

    def _bind(self, args, kwargs):
        if len(args) > len(self.arg_names):
            raise TypeError(f"{self.__name__} takes {len(self.arg_names)} arguments, "
                            f"got {len(args)}")
        bound = dict(zip(self.arg_names, args))
        for k, v in kwargs.items():
            if k in _LAUNCH_OPTIONS:
                continue
            if k not in self.arg_names:
                raise KeyError(f"Keyword argument {k} was specified but unrecognised")
            if k in bound:
                raise TypeError(f"{self.__name__} got multiple values for argument {k}")
            bound[k] = v
        defaults = self.fdef.args.defaults
        first_default = len(self.arg_names) - len(defaults)
        for i, n in enumerate(self.arg_names):
            if n not in bound:
                if i >= first_default:
                    bound[n] = ast.literal_eval(defaults[i - first_default]) if isinstance(
                        defaults[i - first_default], ast.Constant) else None
                else:
                    raise TypeError(f"{self.__name__}() missing argument '{n}'")
        return bound

    def run(self, *args, grid, **kwargs):
        bound = self._bind(args, kwargs)
        if callable(grid):
            grid = grid(dict(bound))
        grid = tuple(int(g) for g in (grid if isinstance(grid, (tuple, list)) else (grid,)))
        if not 1 <= len(grid) <= 3:
            raise ValueError(f"grid must have 1 to 3 dimensions, got {grid}")
        grid = grid + (1,) * (3 - len(grid))
        specs, kinds = [], []
        for n in self.arg_names:
            s, k = self._specialize(n, bound[n])
            specs.append(s)
            kinds.append(k)
        checked = _checked
        key = json.dumps(specs, sort_keys=True) + ("checked" if checked else "")
        handle = self._kernels.get(key)
        if handle is None:
            handle = self._compile(specs, checked)
            self._kernels[key] = handle
        runtime = [(n, k) for n, k in zip(self.arg_names, kinds) if k is not None]
        cargs = (_TclArg * max(1, len(runtime)))()
        for i, (n, k) in enumerate(runtime):
            v, a = bound[n], cargs[i]
            a.kind = _ARG_KIND[k]
            if k == "ptr":
                if v.device.type != "cpu":
                    raise ValueError(f"argument {n}: the opencl backend runs on CPU tensors, "
                                     f"got {v.device}")
                storage = v.untyped_storage()
                a.base = storage.data_ptr()
                a.nbytes = storage.nbytes()
                a.offset = v.data_ptr() - a.base
            elif k == "fp32":
                a.f = float(v)
            else:
                a.i = int(v)
        g = (ctypes.c_uint64 * 3)(*grid)
        err = ctypes.create_string_buffer(4096)
        rc = _library().tcl_launch(handle, g, cargs, len(runtime), err, len(err))
        if rc == 2 and checked:
            _record_oob(self.__name__, self.fn, json.loads(err.value.decode()), runtime, bound,
                        grid)
        elif rc != 0:
            raise RuntimeError(f"{self.__name__}: launch failed: "
                               f"{err.value.decode(errors='replace')}")

    def _compile(self, specs, checked=False):
        functions, globals_ = self._closure()
        spec = {"kernel": self.key, "functions": functions, "globals": globals_,
                "args": [dict(s, name=n) for s, n in zip(specs, self.arg_names)],
                "checked": checked}
        err = ctypes.create_string_buffer(8192)
        h = _library().tcl_compile(json.dumps(spec).encode(), err, len(err))
        if not h:
            from . import CompilationError
            path = inspect.getsourcefile(self.fn) or "<kernel>"
            raise CompilationError(f"{self.__name__} ({os.path.basename(path)}): "
                                   f"{err.value.decode(errors='replace')}")
        return h

    def source(self, *args, **kwargs):
        """The OpenCL C of the specialisation these arguments select (for debugging)."""
        bound = self._bind(args, kwargs)
        specs = [self._specialize(n, bound[n])[0] for n in self.arg_names]
        key = json.dumps(specs, sort_keys=True) + ("checked" if _checked else "")
        if key not in self._kernels:
            self._kernels[key] = self._compile(specs, _checked)
        return _library().tcl_kernel_source(self._kernels[key]).decode()


def kernel_ir(handle):
    """(OpenCL C, line map) of a compiled kernel: the C that PoCL builds, and for each of its
    lines the kernel's Python line it was generated for (None for none)."""
    lib = _library()
    text = lib.tcl_kernel_source(handle).decode(errors="replace")
    lines = json.loads(lib.tcl_kernel_line_map(handle).decode())
    return text, [line or None for line in lines]


def jit(fn=None, *, do_not_specialize=None, **_ignored):
    if fn is None:
        return lambda f: JITFunction(f, do_not_specialize=do_not_specialize)
    return JITFunction(fn, do_not_specialize=do_not_specialize)


# ---- autotune and heuristics ------------------------------------------------------------------

class Config:
    def __init__(self, kwargs, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None, pre_hook=None):
        self.kwargs = dict(kwargs)
        self.num_warps, self.num_stages, self.num_ctas = num_warps, num_stages, num_ctas
        self.maxnreg, self.pre_hook = maxnreg, pre_hook

    def all_kwargs(self):
        return dict(self.kwargs)

    def __repr__(self):
        return f"Config({self.kwargs}, num_warps={self.num_warps}, num_stages={self.num_stages})"


class _Launcher:
    """Common base: kernel[grid](...) on a wrapped JITFunction or launcher."""

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, **kwargs)

    @property
    def arg_names(self):
        return self.fn.arg_names


class Autotuner(_Launcher):
    def __init__(self, fn, configs, key, reset_to_zero=None, restore_value=None,
                 prune_configs_by=None, **_):
        self.fn = fn
        self.configs = configs or [Config({})]
        self.key = key or []
        self.reset_to_zero = reset_to_zero or []
        self.restore_value = restore_value or []
        self.prune = prune_configs_by or {}
        self.cache = {}
        self.__name__ = getattr(fn, "__name__", "kernel")

    def run(self, *args, grid, **kwargs):
        names = self.fn.arg_names
        bound = dict(zip(names, args), **kwargs)
        key = tuple(bound.get(k) for k in self.key) + tuple(
            str(v.dtype) for v in bound.values() if hasattr(v, "data_ptr"))
        if key not in self.cache:
            configs = self.configs
            if "early_config_prune" in self.prune:
                configs = self.prune["early_config_prune"](configs, bound)
            if len(configs) == 1:
                self.cache[key] = configs[0]
            else:
                timings = []
                for c in configs:
                    self._prepare(bound)
                    t0 = time.perf_counter()
                    self._launch(c, args, kwargs, grid)
                    timings.append(time.perf_counter() - t0)
                self.cache[key] = configs[min(range(len(configs)), key=timings.__getitem__)]
                self._restore(bound)
        self._launch(self.cache[key], args, kwargs, grid)

    def _prepare(self, bound):
        for n in self.reset_to_zero:
            bound[n].zero_()
        if self.restore_value and not hasattr(self, "_saved"):
            self._saved = {n: bound[n].clone() for n in self.restore_value}

    def _restore(self, bound):
        for n in self.reset_to_zero:
            bound[n].zero_()
        for n, v in getattr(self, "_saved", {}).items():
            bound[n].copy_(v)
        self.__dict__.pop("_saved", None)

    def _launch(self, config, args, kwargs, grid):
        for k in config.kwargs:
            if k in kwargs:
                raise ValueError(f"Conflicting meta-parameters: {k}. Make sure that you don't "
                                 "re-define auto-tuned symbols.")
        if config.pre_hook:
            config.pre_hook(dict(zip(self.fn.arg_names, args), **kwargs, **config.kwargs))
        self.fn.run(*args, grid=grid, **kwargs, **config.all_kwargs())


class Heuristics(_Launcher):
    def __init__(self, fn, values):
        self.fn = fn
        self.values = values
        self.__name__ = getattr(fn, "__name__", "kernel")

    def run(self, *args, grid, **kwargs):
        bound = dict(zip(self.fn.arg_names, args), **kwargs)
        for k, f in self.values.items():
            kwargs[k] = f(bound)
            bound[k] = kwargs[k]
        self.fn.run(*args, grid=grid, **kwargs)


def autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None, **kwargs):
    return lambda fn: Autotuner(fn, configs, key, reset_to_zero=reset_to_zero,
                                restore_value=restore_value, prune_configs_by=prune_configs_by,
                                **kwargs)


def heuristics(values):
    return lambda fn: Heuristics(fn, values)
