"""The candidate stage's guards: what the worker watches while candidate code runs.

Each guard is separate and reports facts; none of them decides anything.

* `LaunchTracker`: counts Triton launches per kernel name by patching Triton's launch entry
  points (JIT, interpreted, autotuned, heuristics, compiled kernels). It keeps an `in_launch`
  depth so torch and numpy work Triton does itself (the interpreter copies arguments with torch
  and runs kernels with numpy) is not blamed on the candidate, and has a no-op switch that makes
  every launch do nothing (the no-op faithfulness test).
* `AtenGuard`: a TorchDispatchMode for forward calls. It counts ATen ops executed outside
  launches by class (allocation, view, copy, metadata, compute), scalar reads and downcasts,
  and poisons the tensors `empty*`/`new_empty*` return.
* `ForeignCallProfiler`: a `sys.setprofile` hook counting calls into numpy, scipy, math and
  other non-torch libraries that candidate code makes (forward check runs only).
* `ThreadWatch`: threads alive before and after forward calls, and every thread start
  (through `_thread.start_new_thread`, which `threading` also uses) with the candidate line.
* `Auditor`: a `sys.addaudithook` hook, installed before the candidate is imported, that
  records audit events it attributes to the candidate and blocks its sandbox violations.
* `ChannelGuard`: refuses candidate writes, closes and dups aimed at the result channel.
* `IdentitySnapshot`: harness-critical functions by identity, to list what was replaced.

Attribution (audit events, thread starts, foreign calls) walks the Python stack from the
innermost frame. Candidate code is the candidate file and any other code that is not a library
(exec'd strings, files elsewhere). The standard library and third-party libraries are
transparent (a `subprocess.run` from the candidate is the candidate's), except that torch and
Triton, the harness itself and the import machinery are trusted: an event they raise on their
own behalf (Triton running ptxas, torch reading its files) is theirs, not the candidate's.
"""
import collections
import functools
import inspect
import os
import sys
import sysconfig
import threading
import time
import _thread

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from . import value_pack

_WORKER_DIR = os.path.dirname(os.path.abspath(__file__))
_stat = os.stat  # bound before any candidate code exists

# ---------------------------------------------------------------------------------------------
# Where code lives: the frame classification every attribution uses

CANDIDATE, USER, WORKER, TRUSTED, IMPORT, STDLIB, INTROSPECT, LIB, EXEC = (
    "candidate", "user", "worker", "trusted", "import", "stdlib", "introspect", "lib", "exec")

# Standard-library modules whose frame introspection is done for their caller: a candidate
# calling inspect.stack() is the candidate looking at frames, a namedtuple looking up its
# module is not.
_INTROSPECTION_MODULES = ("inspect.py", "traceback.py", "pdb.py", "bdb.py",
                          os.path.join("logging", "__init__.py"))


def _package_dir(name):
    """The folder of an installed package, found without importing it (Triton must not be
    imported before the stage has configured it)."""
    module = sys.modules.get(name)
    path = getattr(module, "__file__", None)
    if path:
        return os.path.dirname(os.path.realpath(path)) + os.sep
    try:
        import importlib.util
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    locations = list(getattr(spec, "submodule_search_locations", None) or [])
    return os.path.realpath(locations[0]) + os.sep if locations else None


def _library_prefixes():
    """The environment's own package folders (site-packages of the interpreter and the venv),
    as real paths ending in a separator."""
    paths = set()
    for key in ("purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            paths.add(path)
    try:
        import site
        paths.update(site.getsitepackages())
        if site.ENABLE_USER_SITE:
            paths.add(site.getusersitepackages())
    except Exception:
        pass
    return tuple(sorted(os.path.realpath(p).rstrip(os.sep) + os.sep for p in paths if p))


class CodeMap:
    """Tells which kind of code a filename (a frame's co_filename) holds; cached per filename."""

    def __init__(self, candidate_path=None):
        self._candidate = set()
        self._cache = {}
        self._torch_files = {}
        self.set_candidate(candidate_path)
        # Code written after this moment is nobody's library, wherever it lies.
        self._since = time.time()
        self._worker = os.path.realpath(_WORKER_DIR) + os.sep
        self._torch = tuple(p for p in (_package_dir("torch"), _package_dir("torchgen"),
                                        _package_dir("functorch")) if p)
        self._trusted = self._torch + tuple(p for p in (_package_dir("triton"),) if p)
        stdlib = set()
        for key in ("stdlib", "platstdlib"):
            path = sysconfig.get_paths().get(key)
            if path:
                stdlib.add(os.path.realpath(path) + os.sep)
        self._stdlib = tuple(sorted(stdlib))
        self._introspection_files = frozenset(os.path.join(d, m) for d in self._stdlib
                                              for m in _INTROSPECTION_MODULES)
        self._libraries = _library_prefixes()

    def set_candidate(self, path):
        if path:
            self._candidate.add(path)
            self._candidate.add(os.path.abspath(path))
            self._candidate.add(os.path.realpath(path))
        self._cache.clear()

    def is_candidate(self, filename):
        return filename in self._candidate

    def kind(self, filename):
        kind = self._cache.get(filename)
        if kind is None:
            kind = self._classify(filename)
            self._cache[filename] = kind
        return kind

    def _classify(self, filename):
        if filename in self._candidate:
            return CANDIDATE
        if filename.startswith("<frozen importlib"):
            return IMPORT
        if filename.startswith("<frozen "):
            return STDLIB
        if filename.startswith("<"):
            # exec'd strings ("<string>", dataclass and namedtuple methods, mpmath's generated
            # functions): they belong to whoever called them, so they are looked through.
            return EXEC
        path = os.path.realpath(filename)
        if path in self._candidate:
            return CANDIDATE
        kind = self._installed_kind(path)
        if kind is not None and not self._installed_before(path):
            # No such file, or one written while the stage ran: code compiled under an
            # installed file's name, or put among the installed files, is not the install's.
            return USER
        return kind or USER

    def _installed_kind(self, path):
        """The kind of a file under the environment's real install prefixes, else None: a
        folder merely named like site-packages (in the scratch, say) holds the candidate's
        code, not a library."""
        if path.startswith(self._worker):
            return WORKER
        if path.startswith(self._trusted):
            return TRUSTED
        if path.startswith(self._libraries):  # first: a venv's site-packages is in platstdlib
            return LIB
        if path.startswith(self._stdlib):
            if path in self._introspection_files:
                return INTROSPECT
            return STDLIB
        return None

    def _installed_before(self, path):
        try:
            return _stat(path).st_mtime <= self._since
        except OSError:
            return False

    def written_by_harness(self, frame):
        """Whether the first frame outside the standard library is the harness's: only the
        harness writes value packs, whoever else asks (torch.save from candidate code too)."""
        while frame is not None:
            kind = self.kind(frame.f_code.co_filename)
            if kind is WORKER:
                return True
            if kind is not STDLIB and kind is not INTROSPECT and kind is not EXEC:
                return False
            frame = frame.f_back
        return False

    def attribute(self, frame, direct=False):
        """(attributed, line): whether the event raised with `frame` innermost is the
        candidate's, and the line of the nearest candidate-file frame.

        `direct` (frame introspection): the standard library's own frame lookups are its own
        business (a namedtuple or a TypeVar finding its module); only candidate code or the
        modules that hand frames out (inspect, traceback, logging.currentframe) acting for it
        count.
        """
        while frame is not None:
            kind = self.kind(frame.f_code.co_filename)
            if kind is CANDIDATE or kind is USER:
                return True, self.candidate_line(frame)
            if kind is TRUSTED or kind is WORKER or kind is IMPORT:
                return False, None
            if direct and kind is STDLIB:
                return False, None
            frame = frame.f_back
        return False, None

    def owner_kind_of_file(self, filename):
        """The kind of code in `filename`, exec'd strings counted as the candidate's."""
        kind = self.kind(filename)
        return USER if kind is EXEC else kind

    def owner_kind(self, frame):
        """The kind of `frame`, exec'd code taking the kind of the code that ran it."""
        while frame is not None:
            kind = self.kind(frame.f_code.co_filename)
            if kind is not EXEC:
                return kind
            frame = frame.f_back
        return USER

    def called_from_user_past_torch(self, frame):
        """Whether the first frame outside torch and the harness is user code: a torch op
        issued inside a launch by a kernel body the interpreter runs (candidate code), not by
        Triton's own argument copies."""
        while frame is not None:
            filename = frame.f_code.co_filename
            kind = self.kind(filename)
            if kind is CANDIDATE or kind is USER:
                return True
            if kind is WORKER or kind is EXEC or (kind is TRUSTED and self._is_torch(filename)):
                frame = frame.f_back
                continue
            return False
        return False

    def _is_torch(self, filename):
        known = self._torch_files.get(filename)
        if known is None:
            known = self._torch_files[filename] = \
                os.path.realpath(filename).startswith(self._torch)
        return known

    def candidate_line(self, frame):
        while frame is not None:
            if frame.f_code.co_filename in self._candidate:
                return frame.f_lineno
            frame = frame.f_back
        return None

    def is_user_frame(self, frame):
        return frame is not None and self.owner_kind(frame) in (CANDIDATE, USER)


# ---------------------------------------------------------------------------------------------
# Launch tracking


class LaunchTracker:
    """Counts Triton launches per kernel name; the no-op switch makes launches do nothing.

    With the opencl backend's shim as `triton`, its `JITFunction.run`, `Autotuner.run` and
    `Heuristics.run` are patched the same way (`_install_shim`).
    Patched entry points (class attributes, so every kernel object is covered):
    `JITFunction.run` (real Triton; `kernel[grid](...)` goes through `KernelInterface.__getitem__`
    to `run`), `InterpretedFunction.run` (TRITON_INTERPRET=1), `Autotuner.run`, `Heuristics.run`
    and the `CompiledKernel.run` property (a kernel compiled with `.warmup()` and launched
    directly, through `compiled[grid](...)` or the launcher itself).
    Only the outermost entry counts: an autotuner's benchmarking launches and the inner
    `JITFunction.run` it calls are inside the launch. A callable grid is candidate code and runs
    outside the launch depth.
    """

    def __init__(self):
        self._tls = threading.local()
        self.by_kernel = collections.Counter()
        self.total = 0
        self.noop = False
        self.installed = False
        self.entry_points = {}   # label -> the patched function (for the identity snapshot)
        self.profiler = None     # a ForeignCallProfiler to suspend while inside a launch
        self.code_map = None     # tells the candidate's hooks from Triton's own
        self.recorder = None     # an AtenRecorder marking launches for its attribution

    # -- depth

    @property
    def depth(self):
        return getattr(self._tls, "depth", 0)

    def in_launch(self):
        return getattr(self._tls, "depth", 0) > 0

    def _enter(self):
        self._tls.depth = getattr(self._tls, "depth", 0) + 1

    def _leave(self):
        self._tls.depth = getattr(self._tls, "depth", 1) - 1

    # -- counting

    def snapshot(self):
        return self.total, collections.Counter(self.by_kernel)

    def since(self, snap):
        total, by_kernel = snap
        diff = collections.Counter(self.by_kernel)
        diff.subtract(by_kernel)
        return self.total - total, {k: v for k, v in diff.items() if v}

    def _record(self, name):
        self.total += 1
        self.by_kernel[name] += 1

    # -- patching

    def install(self):
        if self.installed:
            return
        import triton
        if getattr(triton, "CRUCIBLE_SHIM", False):
            self._install_shim()
            self.installed = True
            return
        import triton.runtime.jit as jit
        import triton.runtime.autotuner as autotuner
        import triton.runtime.interpreter as interpreter
        self._patch(jit.JITFunction, "run", "triton.runtime.jit.JITFunction.run")
        self._patch(interpreter.InterpretedFunction, "run",
                    "triton.runtime.interpreter.InterpretedFunction.run")
        self._patch(autotuner.Autotuner, "run", "triton.runtime.autotuner.Autotuner.run")
        self._patch(autotuner.Heuristics, "run", "triton.runtime.autotuner.Heuristics.run")
        try:
            import triton.compiler.compiler as compiler
        except Exception:  # pragma: no cover - a Triton without the compiled-kernel class
            compiler = None
        compiled = getattr(compiler, "CompiledKernel", None)
        if compiled is not None and isinstance(compiled.__dict__.get("run"), property):
            self._patch_compiled(compiled)
        self.entry_points["triton.runtime.jit.KernelInterface.__getitem__"] = \
            jit.KernelInterface.__getitem__
        if _interpreting():
            _interpreter_autotuning(autotuner.Autotuner)
            _interpreter_bf16_dots(interpreter)
        self.installed = True

    def _install_shim(self):
        """The opencl backend's `triton` shim (core/worker/triton_shim): `kernel[grid](...)` on
        a `JITFunction`, an `Autotuner` or a `Heuristics` goes through `__getitem__` to the
        class's `run`; the autotuner's trial launches and the inner `JITFunction.run` are inside
        the outermost launch. Everything the shim does with tensors (storage pointers, the
        autotuner's resets and restores) and the ctypes call into crucible_tcl is inside it."""
        import triton.runtime as shim
        self._patch(shim.JITFunction, "run", "triton.runtime.JITFunction.run")
        self._patch(shim.Autotuner, "run", "triton.runtime.Autotuner.run")
        self._patch(shim.Heuristics, "run", "triton.runtime.Heuristics.run")
        self.entry_points["triton.runtime.JITFunction.__getitem__"] = \
            shim.JITFunction.__getitem__
        self.entry_points["triton.runtime._Launcher.__getitem__"] = shim._Launcher.__getitem__

    def _patch(self, cls, attr, label):
        original = cls.__dict__[attr]
        tracker = self

        @functools.wraps(original)
        def run(self, *args, **kwargs):
            if kwargs.get("warmup") or tracker.in_launch():
                # Compiling ahead (warmup=True) is not a launch; nested entries are counted by
                # the outermost one.
                tracker._enter()
                try:
                    return original(self, *args, **kwargs)
                finally:
                    tracker._leave()
            tracker._record(kernel_name(self))
            if tracker.noop:
                return None
            tracker._observe_hooks(self)
            grid = kwargs.get("grid")
            if callable(grid):
                kwargs["grid"] = tracker._user_callable(grid)
            return tracker._launch(original, self, args, kwargs)

        run._crucible_original = original
        setattr(cls, attr, run)
        self.entry_points[label] = run

    def _patch_compiled(self, cls):
        """`CompiledKernel.run` is a property giving the C launcher; JITFunction.run calls it
        inside the launch, `compiled[grid](...)` and `compiled.run(...)` from user code."""
        prop = cls.__dict__["run"]
        tracker = self

        def run(self):
            launcher = prop.fget(self)
            if tracker.in_launch():
                return launcher

            def launch(*args, **kwargs):
                if tracker.in_launch():
                    return launcher(*args, **kwargs)
                tracker._record(getattr(self, "name", None) or "<compiled>")
                if tracker.noop:
                    return None
                return tracker._launch(lambda _self, *a, **k: launcher(*a, **k), self, args,
                                       kwargs)

            return launch

        patched = property(run, doc=prop.__doc__)
        cls.run = patched
        self.entry_points["triton.compiler.compiler.CompiledKernel.run"] = patched

    def _launch(self, fn, obj, args, kwargs):
        profiler = self.profiler
        suspended = profiler is not None and profiler.suspend()
        self._enter()
        try:
            with self._range("launch"):
                return fn(obj, *args, **kwargs)
        finally:
            self._leave()
            if suspended:
                profiler.resume()

    def _range(self, kind):
        """The ATen recorder's marker around a launch or a user callable inside one."""
        recorder = self.recorder
        return recorder.range(kind) if recorder is not None else _NO_RANGE

    def _user_callable(self, fn):
        """`fn` (candidate code that Triton calls during a launch: a grid, a heuristic, an
        autotuner hook) run as outside the launch: its torch and numpy work is watched like
        forward's."""
        tracker = self

        @functools.wraps(fn)
        def call(*args, **kwargs):
            saved = tracker._tls.depth if hasattr(tracker._tls, "depth") else 0
            tracker._tls.depth = 0
            profiler = tracker.profiler
            resumed = profiler is not None and profiler.resume_if_suspended()
            try:
                with tracker._range("user"):
                    return fn(*args, **kwargs)
            finally:
                if resumed:
                    profiler.suspend()
                tracker._tls.depth = saved

        call._crucible_user_callable = True
        return call

    # Where Triton keeps the callables it runs during a launch.
    _HOOK_ATTRIBUTES = ("pre_hook", "post_hook", "early_config_prune", "perf_model")

    def _observe_hooks(self, kernel):
        """Wrap the candidate's heuristics and autotuner hooks along `kernel`'s chain of
        wrapped functions (once each), so that they run watched (`_user_callable`)."""
        seen = 0
        obj = kernel
        while obj is not None and seen < 16:
            seen += 1
            try:
                state = object.__getattribute__(obj, "__dict__")
                values = state.get("values")
                if isinstance(values, dict):
                    # A plain dict in its place, read with dict's own methods: a subclass's
                    # methods are the candidate's and could keep the originals.
                    state["values"] = {name: self._wrap_hook(fn)
                                       for name, fn in dict.items(values)}
                for attr in self._HOOK_ATTRIBUTES:
                    fn = state.get(attr)
                    if fn is not None:
                        state[attr] = self._wrap_hook(fn)
                configs = state.get("configs")
                for config in list.__iter__(configs) if isinstance(configs, list) else ():
                    fn = getattr(config, "pre_hook", None)
                    if fn is not None:
                        config.pre_hook = self._wrap_hook(fn)
                obj = state.get("fn")
            except Exception:
                return

    def _wrap_hook(self, fn):
        if not callable(fn) or getattr(fn, "_crucible_user_callable", False):
            return fn
        code = getattr(fn, "__code__", None)
        if code is not None and self.code_map is not None and \
                self.code_map.owner_kind_of_file(code.co_filename) not in (CANDIDATE, USER):
            return fn  # Triton's own hooks (reset_to_zero, restore_value)
        return self._user_callable(fn)


def _interpreting():
    try:
        import triton
        return bool(triton.knobs.runtime.interpret)
    except Exception:
        return os.environ.get("TRITON_INTERPRET") == "1"


def _interpreter_autotuning(cls):
    """Let autotuned kernels run on the interpreter without a GPU.

    Triton benchmarks autotune configs with the active GPU driver's benchmarker, and on a
    machine with no GPU there is none ("0 active drivers"). Timing the interpreter would say
    nothing about the configs anyway, so under the interpreter an autotuner without its own
    `do_bench` rates every config equal and takes the first one.
    """
    def do_bench(self):
        bench = getattr(self, "_do_bench", None)
        return bench if bench is not None else _equal_rating

    cls.do_bench = property(do_bench)


def _equal_rating(kernel_call, quantiles=None, **kwargs):
    return [0.0, 0.0, 0.0] if quantiles else 0.0


def _interpreter_bf16_dots(interpreter):
    """Let tl.dot take bfloat16 tiles on the interpreter.

    Triton's interpreter keeps bfloat16 values as the uint16 words that hold them, and its
    `create_dot` widens only fp8 operands, so a bfloat16 product multiplied the words as integers
    (Triton 3.6: 2e10 off for 16 x 16 unit normals). The synthesizer's GPU convolutions split
    fp32 operands into bfloat16 parts; here each bfloat16 operand is widened to fp32 first, which
    is exact (a bfloat16 word is the top half of its fp32 value) and what tensor cores compute.
    """
    import numpy as np
    import triton.language as tl
    builder = getattr(interpreter, "InterpreterBuilder", None)
    original = getattr(builder, "create_dot", None)
    if original is None or getattr(original, "crucible_bf16", False):
        return

    def widen(handle):
        if handle.dtype.scalar != tl.bfloat16:
            return handle
        words = np.asarray(handle.data).astype(np.uint32) << np.uint32(16)
        return interpreter.TensorHandle(words.view(np.float32), tl.float32)

    def create_dot(self, a, b, d, *args, **kwargs):
        return original(self, widen(a), widen(b), d, *args, **kwargs)

    create_dot.crucible_bf16 = True
    builder.create_dot = create_dot


def kernel_name(obj):
    """The Python function name behind a Triton kernel object (autotuners wrap JIT functions)."""
    seen = 0
    base = obj
    while not inspect.isfunction(base) and hasattr(base, "fn") and seen < 16:
        base = base.fn
        seen += 1
    name = getattr(base, "__name__", None)
    return name if isinstance(name, str) else type(obj).__name__


# ---------------------------------------------------------------------------------------------
# ATen ops during forward

ALLOCATION_OPS = frozenset("""
    empty empty_like empty_strided empty_permuted new_empty new_empty_strided
    zeros zeros_like ones ones_like full full_like new_zeros new_ones new_full scalar_tensor
    fill fill_ zero zero_ resize_ resize_as_
""".split())
POISONED_OPS = frozenset("empty empty_like empty_strided empty_permuted new_empty "
                         "new_empty_strided".split())
VIEW_OPS = frozenset("""
    view _unsafe_view reshape _reshape_alias permute transpose transpose_ t t_ expand expand_as
    squeeze squeeze_ unsqueeze unsqueeze_ slice select as_strided as_strided_ alias detach detach_
    unbind split split_with_sizes unsafe_split unsafe_split_with_sizes chunk unsafe_chunk
    tensor_split narrow view_as flatten unflatten movedim moveaxis swapaxes swapdims diagonal
    unfold view_as_real view_as_complex contiguous _conj _neg_view resolve_conj resolve_neg
    lift _reshape_from_tensor
""".split())
COPY_OPS = frozenset("""
    clone copy copy_ _to_copy to lift_fresh lift_fresh_copy _copy_from _copy_from_and_resize
""".split())
METADATA_OPS = frozenset("""
    sym_size sym_stride sym_numel sym_storage_offset size stride dim numel storage_offset
    is_contiguous is_same_size is_nonzero _has_compatible_shallow_copy_type set_ record_stream
    is_pinned
""".split())
SCALAR_READ_OPS = frozenset(["_local_scalar_dense"])

_FLOAT_BITS = {torch.float64: 64, torch.float32: 32, torch.float16: 16, torch.bfloat16: 16}
for _name in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
              "float8_e8m0fnu", "float4_e2m1fn_x2"):
    if hasattr(torch, _name):
        _FLOAT_BITS[getattr(torch, _name)] = 8


def op_name(func):
    """"aten::add.Tensor" from an OpOverload (str(func) is "aten.add.Tensor")."""
    text = str(func)
    namespace, dot, rest = text.partition(".")
    return f"{namespace}::{rest}" if dot else text


def op_base(func):
    """"add" for aten.add.Tensor."""
    packet = getattr(func, "overloadpacket", None)
    name = getattr(packet, "__name__", None)
    if isinstance(name, str):
        return name
    parts = str(func).split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def op_class(base):
    if base in ALLOCATION_OPS:
        return "allocation"
    if base in VIEW_OPS:
        return "view"
    if base in COPY_OPS:
        return "copy"
    if base in METADATA_OPS:
        return "metadata"
    if base in SCALAR_READ_OPS:
        return "scalar_read"
    return "compute"


def _is_downcast(src_dtype, dst_dtype):
    src = _FLOAT_BITS.get(src_dtype)
    dst = _FLOAT_BITS.get(dst_dtype)
    return src is not None and dst is not None and dst < src


class AtenGuard(TorchDispatchMode):
    """Counts the ATen ops a forward call executes outside Triton launches and poisons the
    uninitialised tensors it allocates.

    `compute` holds "aten::add.Tensor"-style names of compute ops (everything not allocation,
    view, copy, metadata or a scalar read); `by_class` counts every class. Ops inside a launch
    (the interpreter's own argument copies) are neither counted nor poisoned. The mode is
    thread-local in PyTorch: ops a candidate thread runs are not seen (ThreadWatch reports the
    thread).
    """

    def __init__(self, launches, poison=True, code_map=None):
        super().__init__()
        self.launches = launches
        self.poison = poison
        self.code_map = code_map
        self.in_kernel_body = 0   # ops a kernel body ran with torch (the interpreter runs it)
        self.compute = collections.Counter()
        self.by_class = collections.Counter()
        self.scalar_reads = 0
        self.downcasts = 0
        self.poisoned = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if self.launches is not None and self.launches.in_launch():
            # Triton's own copies are not the candidate's; torch called from a kernel body
            # (which only the interpreter can run) is.
            if self.code_map is None or not self._from_kernel_body():
                return out
            self.in_kernel_body += 1
        try:
            self._account(func, args, kwargs, out)
        except Exception:  # accounting must never change what the candidate computes
            pass
        return out

    def _from_kernel_body(self):
        try:
            return self.code_map.called_from_user_past_torch(sys._getframe(2))
        except Exception:
            return False

    def _account(self, func, args, kwargs, out):
        if getattr(func, "namespace", None) == "profiler":
            return  # the ATen recorder's own ranges
        base = op_base(func)
        kind = op_class(base)
        self.by_class[kind] += 1
        if kind == "compute":
            self.compute[op_name(func)] += 1
        elif kind == "scalar_read":
            self.scalar_reads += 1
        elif kind == "copy":
            self._check_cast(base, args, kwargs, out)
        if self.poison and base in POISONED_OPS and isinstance(out, torch.Tensor):
            value_pack.poison_(out)
            self.poisoned += 1

    def _check_cast(self, base, args, kwargs, out):
        if base in ("_to_copy", "to"):
            src = args[0] if args else kwargs.get("self")
            if isinstance(src, torch.Tensor) and isinstance(out, torch.Tensor) \
                    and _is_downcast(src.dtype, out.dtype):
                self.downcasts += 1
        elif base in ("copy_", "copy", "_copy_from", "_copy_from_and_resize"):
            dst = args[0] if args else kwargs.get("self")
            src = args[1] if len(args) > 1 else kwargs.get("src")
            if base == "_copy_from" or base == "_copy_from_and_resize":
                src, dst = dst, src
            if isinstance(src, torch.Tensor) and isinstance(dst, torch.Tensor) \
                    and _is_downcast(src.dtype, dst.dtype):
                self.downcasts += 1


class _NoRange:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_NO_RANGE = _NoRange()


_has_kernel = torch._C._dispatch_has_kernel_for_dispatch_key  # bound before candidate code
_COMPOSITE = {}


def _composite(base):
    """Whether every overload of aten::`base` is CompositeImplicitAutograd (implemented by
    calling other ops, each recorded as a child)."""
    known = _COMPOSITE.get(base)
    if known is None:
        known = False
        try:
            packet = getattr(torch.ops.aten, base)
            names = [f"aten::{base}" + ("" if o == "default" else f".{o}")
                     for o in packet.overloads()]
            known = bool(names) and all(_has_kernel(n, "CompositeImplicitAutograd")
                                        for n in names)
        except Exception:
            pass
        _COMPOSITE[base] = known
    return known


class AtenRecorder:
    """ATen ops recorded below the dispatch mode, by PyTorch's profiler (RecordFunction
    callbacks in C++, CPU activity only), for the whole run of forward calls.

    A TorchDispatchMode sees only ops that reach Python dispatch; private switches
    (`torch._C._DisableTorchDispatch`, excluded dispatch keys, popped modes) take ops past it,
    and its tallies are Python objects. The profiler's callbacks sit in the dispatcher itself
    and its records in C++. Every guarded forward call runs inside a range named with a secret
    of this run and its stage, every launch and every candidate callable inside one inside
    ranges of their own; an op counts when it is the outermost ATen op of a forward range and
    not inside a launch (Triton's own copies), unless inside the candidate's callable there.
    The profiler stays on for the whole run, so being watched is not a phase either. A forward
    range missing from the record means the profiler was switched off while it ran."""

    def __init__(self):
        self._profile = None
        self._secret = os.urandom(8).hex()
        self.expected = collections.Counter()  # stage -> forward ranges opened
        self.disabled_seen = 0
        self.error = None

    def start(self):
        from torch.profiler import ProfilerActivity, profile
        try:
            self._profile = profile(activities=[ProfilerActivity.CPU], acc_events=True)
            self._profile.__enter__()
        except Exception as exc:  # a torch without a usable profiler: say so, run without it
            self._profile = None
            self.error = f"{type(exc).__name__}: {exc}"[:300]

    @property
    def active(self):
        return self._profile is not None

    def range(self, kind):
        from torch.autograd.profiler import record_function
        return record_function(f"crucible::{kind}::{self._secret}")

    def forward(self, stage):
        if not self.active:
            return _NO_RANGE
        self.expected[stage] += 1
        return self.range("forward::" + stage)

    def check_enabled(self):
        if self.active and not torch.autograd._profiler_enabled():
            self.disabled_seen += 1

    def finish(self):
        """{"ok", "forward_ranges", "expected", "compute": {stage: {op: n}}, ...}"""
        facts = {"ok": False, "error": self.error, "forward_ranges": {},
                 "expected": dict(self.expected), "compute": {},
                 "disabled_seen": self.disabled_seen}
        if self._profile is None:
            return facts
        try:
            self._profile.__exit__(None, None, None)
            events = self._profile.events() or []
        except Exception as exc:
            facts["error"] = f"the profiler's record could not be read: {type(exc).__name__}"
            return facts
        prefix = f"crucible::forward::"
        suffix = f"::{self._secret}"
        ranges, compute = collections.Counter(), {}
        for event in events:
            name = event.name
            if not (name.startswith(prefix) and name.endswith(suffix)):
                continue
            stage = name[len(prefix):-len(suffix)]
            ranges[stage] += 1
            found = compute.setdefault(stage, collections.Counter())
            self._visit(event, found, inside_launch=False)
        facts["forward_ranges"] = dict(ranges)
        facts["compute"] = {stage: dict(c) for stage, c in compute.items() if c}
        facts["ok"] = True
        return facts

    def _visit(self, event, found, inside_launch):
        for child in event.cpu_children:
            name = child.name
            if name.endswith("::" + self._secret):
                kind = name.split("::")[1]
                if kind == "launch":
                    self._visit(child, found, inside_launch=True)
                elif kind == "user":
                    self._visit(child, found, inside_launch=False)
                continue
            if name.startswith("aten::"):
                base = name[len("aten::"):]
                if _composite(base):
                    # No kernel of its own: whatever it did is in its children (item() is a
                    # scalar read, dropout in eval mode nothing at all).
                    self._visit(child, found, inside_launch)
                elif not inside_launch and op_class(base) == "compute":
                    found[name] += 1
                continue  # the ops a kernel calls are its own implementation
            self._visit(child, found, inside_launch)


# ---------------------------------------------------------------------------------------------
# Calls into foreign libraries (sys.setprofile)

FOREIGN_PACKAGES = frozenset("""
    numpy scipy math cmath statistics numba cupy cupyx jax jaxlib tensorflow sklearn pandas
    numexpr mpmath sympy decimal _decimal fractions cython pycuda pyopencl dask
""".split())
# torch functions that carry tensors into or out of another library's world
_BOUNDARY_METHODS = frozenset(["Tensor.numpy", "Tensor.tolist", "TensorBase.numpy",
                               "TensorBase.tolist", "Tensor.__array__"])
_BOUNDARY_FUNCTIONS = frozenset(["from_numpy", "frombuffer", "from_dlpack"])
# torch functions that turn the dispatch mode off (ops then escape the ATen count)
_MODE_ESCAPES = frozenset(["_disable_current_modes", "_pop_mode", "_pop_mode_temporarily",
                           "_pop_torch_dispatch_stack", "_set_dispatch_mode",
                           "_unset_dispatch_mode", "_push_on_torch_dispatch_stack",
                           "_set_torch_dispatch_mode", "_DisableTorchDispatch"])
# torch file I/O done in C++ without audit events: torch.serialization.save/load (Python
# frames) and the from_file builtins
_UNAUDITED_IO = frozenset(["save", "load", "from_file"])
# looking for the guards themselves (to behave differently while they watch)
_GUARD_PROBES = frozenset(["getprofile", "gettrace", "_len_torch_dispatch_stack",
                           "_get_dispatch_stack_at", "_get_current_dispatch_mode",
                           "_get_current_dispatch_mode_stack", "_get_dispatch_mode",
                           "is_in_torch_dispatch_mode"])


class ForeignCallProfiler:
    """Counts calls candidate code makes into numpy/scipy/math/... ("numpy.dot": 3).

    Sees C functions called from candidate code (`c_call`: math.sqrt, np.asarray, ndarray
    methods, ufunc methods) and Python functions of those libraries entered from candidate code
    (`call`: np.sum, np.linalg.norm, numpy's dispatchers), plus the torch boundary
    (Tensor.numpy/tolist/__array__, torch.from_numpy). Calling a ufunc object (np.matmul(a, b),
    a @ b on ndarrays) raises no profile event in CPython 3.11, so those are seen only at the
    boundary where the arrays came from. Suspended inside Triton launches; main thread only.
    """

    def __init__(self, code_map, launches=None, auditor=None):
        self.code_map = code_map
        self.launches = launches
        self.auditor = auditor
        self.calls = collections.Counter()
        self._active = False
        self._previous = None
        self._pending = None   # (code, instruction, name) of a numpy dispatcher just counted
        self._hook = self._profile  # one bound method: sys.getprofile() is compared with it

    def start(self):
        self._previous = sys.getprofile()
        self._active = True
        sys.setprofile(self._hook)

    def stop(self):
        if self._active:
            sys.setprofile(self._previous)
        self._active = False
        self._previous = None

    def suspend(self):
        if self._active and sys.getprofile() is self._hook:
            sys.setprofile(None)
            return True
        return False

    def resume_if_suspended(self):
        """Resume while the profiler is on but suspended (inside a launch); True if it did."""
        if self._active and sys.getprofile() is None:
            sys.setprofile(self._hook)
            return True
        return False

    def resume(self):
        if self._active:
            sys.setprofile(self._hook)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def _profile(self, frame, event, arg):
        try:
            if event == "c_call":
                caller = frame
                name = _c_function_name(arg)
                called = getattr(arg, "__name__", None)
            elif event == "call":
                caller = frame.f_back
                name = _python_function_name(frame)
                called = frame.f_code.co_name
            else:
                return
            if (called in _MODE_ESCAPES or called in _GUARD_PROBES) and caller is not None:
                self._suspicious(called, caller)
            if called in _UNAUDITED_IO and caller is not None:
                self._file_io(event, frame, arg, caller)
            if name is None or caller is None:
                return
            if self.launches is not None and self.launches.in_launch():
                return
            if not self.code_map.is_user_frame(caller):
                return
            site = (id(caller.f_code), caller.f_lasti, name)
            pending, self._pending = self._pending, None
            if event == "call" and site == pending and not _is_dispatcher(frame):
                return  # numpy's Python implementation after its dispatcher: one call
            if event == "call" and _is_dispatcher(frame):
                self._pending = site
            self.calls[name] += 1
        except Exception:
            pass

    def _file_io(self, event, frame, arg, caller):
        """torch reads and writes files in C++, where no audit event is raised: judge the
        path here (forward calls only; the digests of result files are the backstop)."""
        if self.auditor is None:
            return
        if event == "call":
            if frame.f_globals.get("__name__") != "torch.serialization":
                return
            name = "torch." + frame.f_code.co_name
            path = frame.f_locals.get("f")
        else:
            if _top(getattr(arg, "__module__", None) or
                    getattr(getattr(arg, "__self__", None), "__module__", None)) != "torch":
                return
            name, path = "torch.from_file", None
        attributed, line = self.code_map.attribute(caller)
        if not attributed:
            return
        verdict = self.auditor.judge_path(path, writing=name == "torch.save") \
            if isinstance(path, (str, bytes, os.PathLike)) else "file access"
        if verdict is not None:
            self.auditor.record(name, SANDBOX, f"{verdict} (no audit event)", line)

    def _suspicious(self, called, caller):
        if self.auditor is None:
            return
        attributed, line = self.code_map.attribute(caller)
        if attributed:
            event = "torch.dispatch_mode_escape" if called in _MODE_ESCAPES else "guard_probe"
            self.auditor.record(event, TAMPERING, called, line)


def _top(module_name):
    return module_name.partition(".")[0] if isinstance(module_name, str) else None


def _c_function_name(fn):
    qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if not isinstance(qualname, str):
        return None
    owner = getattr(fn, "__self__", None)
    objclass = getattr(fn, "__objclass__", None)
    if objclass is not None:
        module = getattr(objclass, "__module__", None)
    elif owner is None or isinstance(owner, type(sys)):
        module = getattr(fn, "__module__", None) or getattr(owner, "__name__", None)
    else:
        module = getattr(type(owner), "__module__", None)
    top = _top(module)
    if top in FOREIGN_PACKAGES:
        if type(owner).__name__ == "ufunc":
            return f"{top}.{getattr(owner, '__name__', 'ufunc')}.{fn.__name__}"
        return f"{top}.{qualname}"
    if top == "torch":
        if qualname in _BOUNDARY_METHODS:
            return "torch." + qualname.replace("TensorBase", "Tensor")
        if getattr(fn, "__name__", None) in _BOUNDARY_FUNCTIONS:
            return "torch." + fn.__name__
    return None


def _is_dispatcher(frame):
    name = frame.f_code.co_name
    return name.startswith("_") and name.endswith("_dispatcher")


def _python_function_name(frame):
    globals_ = frame.f_globals
    module = globals_.get("__name__") if isinstance(globals_, dict) else None
    top = _top(module)
    name = frame.f_code.co_name
    if top in FOREIGN_PACKAGES:
        if name.startswith("_") and name.endswith("_dispatcher"):
            name = name[1:-len("_dispatcher")]
        elif name.startswith("_"):
            return None  # a library helper entered from C (ndarray.mean -> _mean): seen already
        return f"{top}.{name}"
    if top == "torch" and name == "__array__" and module == "torch._tensor":
        return "torch.Tensor.__array__"
    return None


# ---------------------------------------------------------------------------------------------
# Threads


_MAX_THREAD_ENTRIES = 50


class ThreadWatch:
    """Thread starts (all of them, with the candidate line) and threads alive around forwards.

    `install()` wraps `_thread.start_new_thread` and `threading._start_new_thread` (which
    Thread.start uses): CPython 3.11 raises no audit event for a new thread. Threads started
    from C (torch's own pools) are not Python threads and are not listed.
    """

    def __init__(self, code_map, auditor=None):
        self.code_map = code_map
        self.auditor = auditor
        self.starts = []          # [{"name", "line", "attributed"}]
        self.baseline = None      # threads alive before the first forward
        self.after = None         # threads alive after the last forward
        self.seen = {}            # ident -> Thread, new threads seen alive after a forward
        self._originals = {}
        self.entry_points = {}

    def install(self):
        if self._originals:
            return
        # Python 3.13 starts threads through start_joinable_thread; earlier versions through
        # start_new_thread (threading keeps its own reference to whichever it uses).
        for name in ("start_new_thread", "start_joinable_thread"):
            original = getattr(_thread, name, None)
            if original is None:
                continue
            wrapper = self._wrap(original)
            self._originals["_thread." + name] = original
            setattr(_thread, name, wrapper)
            self.entry_points["_thread." + name] = wrapper
            for alias in ("_start_new_thread", "_start_joinable_thread"):
                if getattr(threading, alias, None) is original:
                    setattr(threading, alias, wrapper)
                    self.entry_points["threading." + alias] = wrapper

    def _wrap(self, original):
        watch = self

        @functools.wraps(original)
        def start(function, *args, **kwargs):
            watch._note_start(sys._getframe(1), function)
            return original(function, *args, **kwargs)

        return start

    def _note_start(self, frame, function):
        try:
            attributed, line = self.code_map.attribute(frame)
            target = getattr(function, "__self__", None)
            thread = target if isinstance(target, threading.Thread) else None
            name = thread.name if thread is not None else getattr(function, "__qualname__", None)
            self.starts.append({"name": str(name), "line": line, "attributed": attributed,
                                "thread": thread})
            if attributed and self.auditor is not None:
                self.auditor.record("_thread.start_new_thread", "concurrency_escape",
                                    str(name), line)
        except Exception:
            pass

    def mark_baseline(self):
        if self.baseline is None:
            self.baseline = {t.ident: t for t in threading.enumerate()}

    def after_forward(self):
        self.after = threading.active_count()
        if self.baseline is None:
            self.mark_baseline()
            return
        for thread in threading.enumerate():
            if thread.ident not in self.baseline:
                self.seen[thread.ident] = thread

    def facts(self):
        """{"before", "after", "started"}: `started` has one entry per (name, line), folding
        the same thread started on every call, with how many were started ("count")."""
        baseline = self.baseline or {}
        threads = []   # (thread or None, name, line)
        recorded = set()
        for record in self.starts:
            thread = record["thread"]
            if thread is not None:
                recorded.add(id(thread))  # torch's or Triton's own threads are not listed
            if record["attributed"]:
                threads.append((thread, record["name"], record["line"]))
        for thread in list(self.seen.values()):
            # alive after a forward, its start not seen: the candidate got round the wrapper
            # (the identity snapshot says how). Dummy threads are C threads that called into
            # Python, not the candidate's.
            if id(thread) not in recorded and not isinstance(thread, threading._DummyThread):
                threads.append((thread, getattr(thread, "_name", "?"), None))
        folded = {}
        for thread, name, line in threads:
            name = str(name)
            entry = folded.get((name, line))
            if entry is None:
                entry = folded[(name, line)] = {"name": name, "alive": False, "daemon": None,
                                                "line": line, "count": 0}
            entry["count"] += 1
            if thread is not None:
                try:  # a Thread subclass's methods are the candidate's code
                    entry["alive"] = entry["alive"] or bool(thread.is_alive())
                    entry["daemon"] = bool(thread.daemon)
                except Exception:
                    entry["alive"] = None
        after = self.after if self.after is not None else threading.active_count()
        return {"before": len(baseline), "after": after,
                "started": list(folded.values())[:_MAX_THREAD_ENTRIES]}


# ---------------------------------------------------------------------------------------------
# Audit hook

SANDBOX, TAMPERING, CONCURRENCY = "sandbox_violation", "harness_tampering", "concurrency_escape"
# how an event is attributed: walking past libraries, the innermost frame only (frame
# introspection), or refused to anything but the harness (writes to its result files)
WALK, DIRECT, HARNESS_ONLY = "walk", "direct", "harness_only"

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
_SYSTEM_READ_DIRS = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc",
                     "/proc", "/sys", "/dev", "/opt", "/run/nvidia", "/var/lib/nvidia")
_PROCESS_EVENTS = frozenset(["subprocess.Popen", "os.system", "os.exec", "os.posix_spawn",
                             "os.spawn", "os.kill", "os.killpg", "signal.pthread_kill",
                             "os.startfile", "pty.spawn", "os.popen"])
_NETWORK_EVENTS = frozenset(["urllib.Request", "http.client.connect", "http.client.send",
                             "ftplib.connect", "ftplib.sendcmd", "smtplib.connect",
                             "smtplib.send", "poplib.connect", "imaplib.open", "nntplib.connect",
                             "telnetlib.Telnet.open", "webbrowser.open"])
_FORK_EVENTS = frozenset(["os.fork", "os.forkpty"])
# filesystem changes: event -> indexes of the path arguments
_FS_EVENTS = {"os.remove": (0,), "os.rmdir": (0,), "shutil.rmtree": (0,), "os.rename": (0, 1),
              "os.link": (0, 1), "os.symlink": (1,), "os.truncate": (0,), "os.mkdir": (0,),
              "os.chmod": (0,), "os.chown": (0,), "os.utime": (0,), "shutil.copyfile": (1,),
              "shutil.copytree": (1,), "shutil.move": (0, 1), "os.chflags": (0,),
              "os.lchmod": (0,), "os.lchown": (0,), "os.setxattr": (0,),
              "os.removexattr": (0,)}
_TAMPERING_WALK = frozenset(["gc.get_objects", "gc.get_referrers", "gc.get_referents",
                             "sys._current_frames", "sys._current_exceptions",
                             "sys.addaudithook"])
_TAMPERING_DIRECT = frozenset(["sys._getframe", "sys.settrace", "sys.setprofile",
                               "code.__new__", "function.__new__"])
_SETATTR_EVENTS = frozenset(["object.__setattr__", "object.__delattr__"])
# Attributes that hand out a frame (and through f_back, which raises no event, every frame
# below it: the harness's included).
_FRAME_ATTRS = frozenset(["tb_frame", "gi_frame", "cr_frame", "ag_frame"])
# Types (and functions) of these packages are the harness's tools; changing them is tampering.
_PROTECTED_TOPS = frozenset(["torch", "triton", "numpy", "time", "builtins", "sys", "gc", "json",
                             "os", "threading", "_thread", "crucible_worker", "statistics",
                             "importlib", "io", "_io", "signal"])

_MAX_RECORDS = 200


def _text(value, limit=200):
    try:
        text = os.fsdecode(value) if isinstance(value, (bytes, os.PathLike)) else str(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit] + "..."


class Auditor:
    """The audit hook (installed once; Python has no way to remove one).

    Records events attributed to the candidate: {"event", "category", "detail", "line"} with
    repeats folded into "count". Candidate sandbox violations (and fork) are also blocked by
    raising PermissionError from the hook, which fails the audited operation.

    Roots: `write_roots` may be written and read, `read_roots` read (the candidate's folder,
    the inputs), and Python's installation and system folders read. Value-pack files (*.ctp)
    are the harness's results: the candidate may not write them anywhere.
    """

    def __init__(self, code_map, write_roots=(), read_roots=()):
        self.code_map = code_map
        self.enabled = True
        self.write_roots = tuple(self._root(p) for p in write_roots if p)
        self.read_roots = tuple(self._root(p) for p in read_roots if p) + self.write_roots
        python_dirs = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
        for key in ("stdlib", "platstdlib", "purelib", "platlib", "include", "scripts", "data"):
            path = sysconfig.get_paths().get(key)
            if path:
                python_dirs.add(path)
        try:
            import site
            python_dirs.update(site.getsitepackages())
            python_dirs.add(site.getusersitepackages())
        except Exception:
            pass
        self.system_roots = tuple(self._root(p) for p in python_dirs if p) + \
            tuple(d + os.sep for d in _SYSTEM_READ_DIRS)
        pid = os.getpid()
        self._fd_tables = (f"/proc/{pid}/fd", f"/proc/{pid}/fdinfo", f"/proc/{pid}/task",
                           "/proc/self/fd", "/dev/fd")
        self.channel = None   # a ChannelGuard, once the channel is guarded
        self.records = []
        self._index = {}
        self.dropped = 0
        self._tls = threading.local()
        self._handlers = {}
        self.installed = False

    @staticmethod
    def _root(path):
        return os.path.realpath(os.fsdecode(path)).rstrip(os.sep) + os.sep

    def install(self):
        if not self.installed:
            sys.addaudithook(self._hook)
            self.installed = True

    # -- recording

    def record(self, event, category, detail, line):
        key = (event, category, detail, line)
        existing = self._index.get(key)
        if existing is not None:
            existing["count"] += 1
            return
        if len(self.records) >= _MAX_RECORDS:
            self.dropped += 1
            return
        entry = {"event": event, "category": category, "detail": detail, "line": line,
                 "count": 1}
        self._index[key] = entry
        self.records.append(entry)

    def facts(self):
        return [dict(r) for r in self.records]

    # -- the hook

    def _hook(self, event, args):
        handler = self._handlers.get(event, False)
        if handler is False:
            handler = self._handler_for(event)
            self._handlers[event] = handler
        if handler is None or not self.enabled:
            return
        tls = self._tls
        if getattr(tls, "busy", False):
            return
        tls.busy = True
        try:
            verdict = handler(event, args)
            if verdict is None:
                return
            category, detail, block, mode = verdict
            frame = sys._getframe(1)
            if mode is HARNESS_ONLY:
                if self.code_map.written_by_harness(frame):
                    return
                line = self.code_map.candidate_line(frame)
            else:
                attributed, line = self.code_map.attribute(frame, direct=mode is DIRECT)
                if not attributed:
                    return
            self.record(event, category, detail, line)
        except Exception:
            return
        finally:
            tls.busy = False
        if block:
            raise PermissionError(f"crucible sandbox: {event} ({detail}) is not allowed")

    def _handler_for(self, event):
        if event == "open":
            return self._on_open
        if event in _FS_EVENTS:
            return self._on_fs
        if event in ("os.listdir", "os.scandir"):
            return self._on_listdir
        if event in _PROCESS_EVENTS or event.startswith("os.exec") \
                or event.startswith("os.posix_spawn") or event.startswith("os.spawn"):
            return self._on_process
        if event.startswith("socket.") or event in _NETWORK_EVENTS:
            return self._on_network
        if event in _FORK_EVENTS:
            return self._on_fork
        if event.startswith("ctypes."):
            return self._on_ctypes
        if event in _TAMPERING_WALK:
            return self._on_tampering_walk
        if event in _TAMPERING_DIRECT:
            return self._on_tampering_direct
        if event in _SETATTR_EVENTS:
            return self._on_setattr
        if event == "object.__getattr__":
            return self._on_getattr
        return None

    # -- handlers: (category, detail, block, direct) or None

    def _on_open(self, event, args):
        path = args[0] if args else None
        if isinstance(path, int):
            if self.channel is not None and self.channel.is_channel(path):
                return TAMPERING, "open the result channel", True, HARNESS_ONLY
            return None
        if path is None:
            return None
        mode = args[1] if len(args) > 1 else None
        flags = args[2] if len(args) > 2 else 0
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
            (isinstance(flags, int) and (flags & _WRITE_FLAGS) != 0)
        target = self._path(path)
        if target is None:
            return None
        if writing:
            if _is_result_file(target):
                return SANDBOX, f"write {target}", True, HARNESS_ONLY
            if self._writable(target):
                return None
            return SANDBOX, f"write {target}", True, WALK
        if self._is_fd_table(target):
            return TAMPERING, f"read {target}", True, WALK
        if self._readable(target):
            return None
        return SANDBOX, f"read {target}", True, WALK

    def _on_fs(self, event, args):
        for index in _FS_EVENTS[event]:
            if index < len(args):
                target = self._path(args[index])
                if target is None:
                    continue
                if _is_result_file(target):
                    return SANDBOX, f"{event} {target}", True, HARNESS_ONLY
                if not self._writable(target):
                    return SANDBOX, f"{event} {target}", True, WALK
        return None

    def _on_listdir(self, event, args):
        # The result channel is a pipe among this process's file descriptors: listing them
        # is how candidate code would find it.
        target = self._path(args[0] if args and args[0] is not None else ".")
        if target is not None and self._is_fd_table(target):
            return TAMPERING, f"{event} {target}", True, WALK
        return None

    def _on_process(self, event, args):
        return SANDBOX, _text(args[:2] if len(args) > 1 else args), True, WALK

    def _on_network(self, event, args):
        return SANDBOX, _text(args[1:3] if event.startswith("socket.") else args[:2]), \
            True, WALK

    def _on_fork(self, event, args):
        return CONCURRENCY, event, True, WALK

    def _on_ctypes(self, event, args):
        return TAMPERING, _text(args[:1]), False, WALK

    def _on_tampering_walk(self, event, args):
        # Blocked, not only recorded: walking the heap or other threads' frames is how a
        # candidate would find the harness's objects (the channel, its key), and on a GPU a full
        # gc.get_objects() walk can outlast the timeout.
        return TAMPERING, event, True, WALK

    def _on_tampering_direct(self, event, args):
        return TAMPERING, event, False, DIRECT

    def _on_getattr(self, event, args):
        if len(args) < 2 or args[1] not in _FRAME_ATTRS:
            return None
        return TAMPERING, f"{type(args[0]).__name__}.{args[1]}", False, DIRECT

    def _on_setattr(self, event, args):
        if len(args) < 2:
            return None
        obj, name = args[0], args[1]
        if name == "__code__":
            return TAMPERING, f"{_qualified(obj)}.__code__", False, WALK
        owner_module = getattr(obj, "__module__", None) if isinstance(obj, type) else None
        if isinstance(owner_module, str) and _top(owner_module) in _PROTECTED_TOPS:
            return TAMPERING, f"{_qualified(obj)}.{name}", False, WALK
        return None

    # -- paths

    def _path(self, path):
        try:
            path = os.fsdecode(path)
        except TypeError:
            return None
        try:
            return os.path.realpath(path)
        except Exception:
            return os.path.abspath(path)

    def judge_path(self, path, writing):
        """None when the candidate may read (or write) `path`, else a description."""
        target = self._path(path)
        if target is None:
            return None
        if writing:
            return None if self._writable(target) else f"write {target}"
        if self._is_fd_table(target) or not self._readable(target):
            return f"read {target}"
        return None

    def _is_fd_table(self, target):
        return target.startswith(self._fd_tables)

    def _writable(self, target):
        if _is_result_file(target):
            return False
        return (target + os.sep).startswith(self.write_roots) if self.write_roots else False

    def _readable(self, target):
        probe = target + os.sep
        return probe.startswith(self.read_roots) or probe.startswith(self.system_roots)


def _is_result_file(path):
    """Value packs (and value_pack's temporary files): the harness's results."""
    base = os.path.basename(path)
    return base.endswith(".ctp") or base.startswith(".ctp-")


def _qualified(obj):
    if isinstance(obj, type):
        module = getattr(obj, "__module__", "")
        if obj is torch.Tensor:
            return "torch.Tensor"
        return f"{module}.{obj.__qualname__}" if module else obj.__qualname__
    module = getattr(obj, "__module__", None)
    name = getattr(obj, "__qualname__", None) or type(obj).__name__
    return f"{module}.{name}" if module else str(name)


# ---------------------------------------------------------------------------------------------
# The result channel


class ChannelGuard:
    """Keeps candidate code off the result channel (the pipe the facts go to).

    Writing to it, closing it or duplicating over it through `os`/`posix` (write, writev,
    sendfile, close, closerange, dup2) is refused unless the harness's own code does it;
    opening it as a file object (os.fdopen, io.open, FileIO on its number, or on a duplicate:
    the pipe is recognised by identity, not number) is refused by the auditor. Refusals raise
    PermissionError and are recorded as harness_tampering.

    An in-process guard only raises the bar: the originals stay reachable to code that
    introspects the wrappers, reloads `posix` or uses ctypes (which the auditor records).
    Only a channel the parent authenticates is out of reach. For that reason nothing reachable
    from the wrappers (closures, attributes) refers to the channel object or the stage.
    """

    _WRITERS = ("write", "writev", "sendfile")
    _CLOSERS = ("close", "closerange", "dup2")

    def __init__(self, code_map, auditor):
        self.code_map = code_map
        self.auditor = auditor
        self.fd = None
        self.identity = None
        self.entry_points = {}

    def install(self, fd):
        if fd is None or self.identity is not None:
            return
        st = os.fstat(fd)
        self.fd, self.identity = fd, (st.st_dev, st.st_ino)
        self.auditor.channel = self
        import posix
        for module in (os, posix):
            for name in self._WRITERS + self._CLOSERS:
                original = getattr(module, name, None)
                if original is None or getattr(original, "_crucible_guard", False):
                    continue
                wrapper = self._wrap(name, original)
                setattr(module, name, wrapper)
                self.entry_points[f"{module.__name__}.{name}"] = wrapper

    def is_channel(self, fd):
        if not isinstance(fd, int) or self.identity is None or fd < 0:
            return False
        if fd == self.fd:
            return True
        try:
            st = os.fstat(fd)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == self.identity

    def _touches(self, name, args):
        if not args:
            return False
        if name == "closerange":
            low = args[0] if isinstance(args[0], int) else 0
            high = args[1] if len(args) > 1 and isinstance(args[1], int) else low
            return self.fd is not None and low <= self.fd < high
        if name == "dup2":
            return len(args) > 1 and self.is_channel(args[1])
        return self.is_channel(args[0])

    def _wrap(self, name, original):
        guard = self

        def wrapper(*args, **kwargs):
            if guard._touches(name, args) and \
                    not guard.code_map.written_by_harness(sys._getframe(1)):
                guard.refuse(f"os.{name}", sys._getframe(1))
            return original(*args, **kwargs)

        wrapper.__name__ = wrapper.__qualname__ = name
        wrapper.__doc__ = getattr(original, "__doc__", None)
        wrapper._crucible_guard = True
        return wrapper

    def refuse(self, what, frame):
        line = self.code_map.candidate_line(frame)
        self.auditor.record(what, TAMPERING, "the result channel", line)
        raise PermissionError(f"crucible sandbox: {what} on the result channel is not allowed")


# ---------------------------------------------------------------------------------------------
# Identity snapshot

_CRITICAL = [
    "time.perf_counter", "time.perf_counter_ns", "time.time", "time.time_ns", "time.monotonic",
    "time.monotonic_ns", "time.process_time", "time.sleep",
    "torch.cuda.synchronize", "torch.cuda.Event", "torch.cuda.Event.elapsed_time",
    "torch.cuda.Event.record", "torch.cuda.Event.synchronize", "torch.cuda.current_stream",
    "torch.cuda.Stream", "torch.cuda.empty_cache",
    "torch.allclose", "torch.isclose", "torch.equal", "torch.manual_seed", "torch.no_grad",
    "torch.Tensor.__eq__", "torch.Tensor.__ne__", "torch.Tensor.clone", "torch.Tensor.copy_",
    "torch.Tensor.cpu", "torch.Tensor.contiguous", "torch.Tensor.detach", "torch.Tensor.to",
    "torch.Tensor.data_ptr", "torch.Tensor.untyped_storage", "torch.Tensor.view",
    "torch.Tensor.numpy", "torch.Tensor.as_subclass", "torch.nn.Module.__call__",
    "torch.nn.Module._call_impl", "torch.nn.Module.eval", "torch.nn.Module.train",
    "builtins.print", "builtins.open", "builtins.len", "builtins.isinstance", "builtins.type",
    "builtins.id", "builtins.getattr", "builtins.setattr", "builtins.hasattr",
    "builtins.__import__", "builtins.iter", "builtins.next", "builtins.sum", "builtins.min",
    "builtins.max", "builtins.sorted", "builtins.range",
    "triton.jit", "triton.autotune", "triton.heuristics", "triton.testing.do_bench",
    "json.dumps", "json.loads", "os.write", "os.replace", "os.fsync", "os.getpid",
    "sys.setprofile", "sys.getprofile", "sys.exit", "sys.audit",
    "threading.enumerate", "threading.active_count",
    "crucible_worker.value_pack.save", "crucible_worker.value_pack.load",
    "crucible_worker.value_pack.poison_", "crucible_worker.value_pack.count_poison",
    "crucible_worker.value_pack.tensors_in",
    "crucible_worker.timing.Timer", "crucible_worker.timing.Timer.time_call",
    "crucible_worker.timing._perf_counter_ns", "crucible_worker.timing._cuda_synchronize",
    "crucible_worker.timing._CudaEvent", "crucible_worker.timing.wants_more",
    "crucible_worker.candidate_stage._perf_counter",
    "crucible_worker.timing.sync", "crucible_worker.timing.median",
    "crucible_worker.timing.measure",
    "crucible_worker.loader.clone_value", "crucible_worker.loader.move_to",
    "crucible_worker.channel.Channel", "crucible_worker.channel.Channel._write",
    "crucible_worker.channel.Channel.facts", "crucible_worker.channel.Channel.phase",
    "crucible_worker.guards.Auditor._hook", "crucible_worker.guards.AtenGuard.__torch_dispatch__",
    "crucible_worker.guards.AtenRecorder.finish", "crucible_worker.guards.AtenRecorder._visit",
    "crucible_worker.guards.AtenRecorder.forward", "crucible_worker.guards.AtenRecorder.range",
    "torch.autograd.profiler.record_function", "torch.profiler.profile",
    "torch.autograd._profiler_enabled",
]

_MISSING = object()


def _split_root(label):
    """(module name, attribute chain) with the longest module prefix present in sys.modules."""
    parts = label.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        name = ".".join(parts[:cut])
        if name in sys.modules:
            return name, parts[cut:]
    return None, parts


def _resolve(root, chain):
    obj = root
    for part in chain:
        try:
            if isinstance(obj, type):
                obj = inspect.getattr_static(obj, part, _MISSING)
            else:
                obj = getattr(obj, part, _MISSING)
        except Exception:  # a replacement object whose attribute lookup fails
            return _MISSING
        if obj is _MISSING:
            return _MISSING
    return obj


class IdentitySnapshot:
    """Harness-critical objects by identity: `changed()` lists what was replaced since, and
    `restore()` puts the originals back (so the harness keeps measuring with its own tools)."""

    def __init__(self, extra=None):
        self.entries = []   # (label, module name, module, chain, original)
        labels = list(_CRITICAL)
        extra = dict(extra or {})
        for label in labels:
            self._add(label)
        known = {entry[0] for entry in self.entries}
        for label, value in extra.items():
            name, chain = _split_root(label)
            if name is not None and label not in known:
                self.entries.append((label, name, sys.modules[name], chain, value))
        self.modules = {name: module for _, name, module, _, _ in self.entries}
        # every object along each label's path, so a replaced intermediate can be put back
        self._originals_by_path = {}
        for _, name, module, chain, original in self.entries:
            for depth in range(1, len(chain) + 1):
                value = original if depth == len(chain) else _resolve(module, chain[:depth])
                if value is not _MISSING:
                    self._originals_by_path.setdefault((id(module), tuple(chain[:depth])),
                                                       value)

    def _add(self, label):
        name, chain = _split_root(label)
        if name is None:
            return
        module = sys.modules[name]
        value = _resolve(module, chain)
        if value is _MISSING:
            return
        self.entries.append((label, name, module, chain, value))

    def _submodules_replaced(self):
        """(parent, attribute, module) for each submodule (torch.cuda) no longer reachable as
        an attribute of its parent."""
        out = []
        for name, module in self.modules.items():
            parent_name, dot, attr = name.rpartition(".")
            parent = self.modules.get(parent_name) or sys.modules.get(parent_name) if dot else None
            if parent is None:
                continue
            try:
                current = getattr(parent, attr, _MISSING)
            except Exception:
                current = _MISSING
            if current is not module:
                out.append((parent, attr, name, module))
        return out

    def changed(self):
        out = []
        for name, module in self.modules.items():
            if sys.modules.get(name) is not module:
                out.append(f"sys.modules['{name}']")
        for _, _, name, _ in self._submodules_replaced():
            out.append(name)
        for label, _, module, chain, original in self.entries:
            if _resolve(module, chain) is not original:
                out.append(label)
        return out

    def restore(self):
        """Put replaced objects back; returns what had been replaced."""
        changed = self.changed()
        for name, module in self.modules.items():
            if sys.modules.get(name) is not module:
                sys.modules[name] = module
        for parent, attr, _, module in self._submodules_replaced():
            try:
                setattr(parent, attr, module)
            except Exception:
                pass
        for label, _, module, chain, original in self.entries:
            if _resolve(module, chain) is original:
                continue
            # Restore from the outside in: a replaced module attribute (torch.cuda) first.
            for depth in range(1, len(chain) + 1):
                owner = _resolve(module, chain[:depth - 1])
                expected = self._originals_by_path.get((id(module), tuple(chain[:depth])))
                if expected is None or owner is _MISSING:
                    continue
                try:
                    if _resolve(owner, chain[depth - 1:depth]) is not expected:
                        setattr(owner, chain[depth - 1], expected)
                except Exception:
                    pass
        return changed
