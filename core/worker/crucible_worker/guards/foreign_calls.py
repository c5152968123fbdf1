"""Calls into numpy, scipy, math and other non-torch libraries that candidate code makes, seen
through `sys.setprofile`.
"""
import collections
import os
import sys

from .auditor import SANDBOX, TAMPERING
from .code_map import _top


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
        self.lines = collections.Counter()  # the candidate's lines the calls were made from
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
            line = self.code_map.candidate_line(caller)
            if line is not None:
                self.lines[line] += 1
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


