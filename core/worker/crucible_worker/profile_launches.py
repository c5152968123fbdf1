"""The profile stage's record of launches: for every outermost Triton launch, in order, the
kernel's name, the candidate's line that launched it and the line of the kernel's `def`, the
grid, and (when a clock is given) the launch's time.

It rides on the guards' `LaunchTracker`, which already patches every launch entry point of real
Triton, of its interpreter and of the opencl backend's shim, and counts only the outermost
entry (an autotuner's trial launches are inside the launch they serve). Nothing else of the
guards runs here: the profile stage reports timings, not verdicts.
"""
import inspect
import os
import sys

from .guards.launches import LaunchTracker

# Bound before any candidate code exists.
_getframe = sys._getframe


class LaunchClock:
    """Times one launch: `start()` before it, `stop(token)` after it, `ms(token)` once the
    device has finished (CUDA events are read after the forward call's synchronize)."""

    def __init__(self, device_type):
        self.device_type = device_type
        import time
        self._perf_counter_ns = time.perf_counter_ns
        if device_type == "cuda":
            import torch
            self._event = torch.cuda.Event

    @property
    def method(self):
        if self.device_type == "cuda":
            return "cuda-events"
        return "host-clock"

    def start(self):
        if self.device_type == "cuda":
            begin = self._event(enable_timing=True)
            begin.record()
            return begin
        return self._perf_counter_ns()

    def stop(self, begin):
        if self.device_type == "cuda":
            end = self._event(enable_timing=True)
            end.record()
            return (begin, end)
        return (self._perf_counter_ns() - begin) / 1e6

    @staticmethod
    def ms(token):
        if isinstance(token, tuple):
            begin, end = token
            return float(begin.elapsed_time(end))
        return float(token)


class LaunchLog(LaunchTracker):
    """Every outermost launch as a dict, in `records`; `around(record, launch)` (a hook the
    counter sets) runs the launch itself."""

    def __init__(self, candidate_path, clock=None):
        super().__init__()
        self.candidate = os.path.realpath(candidate_path)
        self.clock = clock
        self.records = []
        self.around = None
        self._def_lines = {}

    def _launch(self, fn, obj, args, kwargs):
        record = {"kernel": _kernel_function_name(obj), "launch_line": self._launch_line(),
                  "def_line": self._def_line(obj), "grid": None}
        grid = kwargs.get("grid")
        if callable(grid):
            kwargs["grid"] = _grid_recorder(grid, record)
        elif grid is not None:
            record["grid"] = _grid_list(grid)
        self.records.append(record)

        def launch():
            return LaunchTracker._launch(self, fn, obj, args, kwargs)

        if self.around is not None:
            return self.around(record, launch)
        if self.clock is None:
            return launch()
        token = self.clock.start()
        try:
            return launch()
        finally:
            record["clock"] = self.clock.stop(token)

    def _launch_line(self):
        """The innermost frame in the candidate's file: the statement that launched."""
        frame = _getframe(1)
        while frame is not None:
            if _same_file(frame.f_code.co_filename, self.candidate):
                return frame.f_lineno
            frame = frame.f_back
        return None

    def _def_line(self, obj):
        fn = _kernel_function(obj)
        if fn is None:
            return None
        key = id(fn)
        if key not in self._def_lines:
            self._def_lines[key] = _def_line_of(fn, self.candidate)
        return self._def_lines[key]


def _kernel_function(obj):
    """The Python function behind a kernel object (autotuners and heuristics wrap JIT
    functions, which wrap the function; a compiled kernel launched directly keeps the JIT
    function in its source)."""
    seen = 0
    while obj is not None and not inspect.isfunction(obj) and seen < 16:
        inner = getattr(obj, "fn", None)
        obj = inner if inner is not None else getattr(getattr(obj, "src", None), "fn", None)
        seen += 1
    return obj if inspect.isfunction(obj) else None


def _kernel_function_name(obj):
    fn = _kernel_function(obj)
    name = getattr(fn, "__name__", None) or getattr(obj, "name", None)
    return name if isinstance(name, str) else type(obj).__name__


def _def_line_of(fn, candidate):
    """The line of `def` (after any decorators) when the kernel is the candidate's, else None."""
    code = getattr(fn, "__code__", None)
    if code is None or not _same_file(code.co_filename, candidate):
        return None
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return code.co_firstlineno
    for offset, text in enumerate(lines):
        stripped = text.lstrip()
        if stripped.startswith("def ") or stripped.startswith("async def "):
            return first + offset
    return code.co_firstlineno


def _same_file(a, b):
    try:
        return os.path.realpath(a) == b
    except (TypeError, ValueError):
        return False


def _grid_list(grid):
    try:
        values = [int(g) for g in (grid if isinstance(grid, (tuple, list)) else (grid,))]
    except (TypeError, ValueError):
        return None
    return values + [1] * (3 - len(values)) if 1 <= len(values) <= 3 else values


def _grid_recorder(grid, record):
    """A callable grid that writes what it returned into `record`."""
    def call(*args, **kwargs):
        value = grid(*args, **kwargs)
        record["grid"] = _grid_list(value)
        return value

    return call
