"""Launch tracking: Triton's launch entry points patched to count launches per kernel, keep an
`in_launch` depth, run the candidate's launch hooks as outside the launch, and switch every
launch to a no-op for the faithfulness test.
"""
import collections
import functools
import inspect
import os
import threading

from .code_map import CANDIDATE, USER
from .aten_recorder import _NO_RANGE


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


