"""The `ir` stage: what actually runs for a candidate, kernel by kernel (docs/WORKER_PROTOCOL.md,
"ir"; `crucible ir`).

The candidate is built and called once on the reference's first inputs, as the candidate stage
does, and every distinct kernel specialisation it launches is reported with the text of each
level its backend compiles it to:

* opencl: the OpenCL C that crucible_tcl generates (the very text PoCL builds) with, for each C
  line, the kernel's Python line it was generated for.
* cuda: Triton's `asm` levels ttir, ttgir, llir and ptx. On a machine with a GPU these are the
  kernels the launches compiled; without one the call runs on Triton's interpreter on the CPU,
  each launch's arguments are captured, and the kernel is compiled for a default target
  (`triton.compile` needs no device). Their line maps are parsed on the C++ side
  (core/inspect/ir_line_map) from the locations the levels carry.
* interpret: nothing is compiled; the facts say so.

The candidate's code runs only here, behind the same walls as the candidate stage; the facts are
shown to the user, never judged.
"""
import inspect
import os

from . import candidate_stage, loader

STAGE = "ir"
MODULE_NAME = "crucible_candidate"
CUDA_LEVELS = ("ttir", "ttgir", "llir", "ptx")
DEFAULT_TARGET = ("cuda", 90, 32)  # compiled for when no GPU is visible
MAX_KERNELS = 32
MAX_TEXT = 4 << 20  # characters per level; the rest is cut
_MISSING = object()


def run(job, channel):
    backend = job.get("backend", "interpret")
    facts = {"backend": backend, "compiled": backend != "interpret", "target": None,
             "note": None, "kernels": [], "error": None}
    gpu = backend == "cuda" and _gpu_available()
    # Without a GPU the cuda backend's launches are captured on the interpreter, then compiled
    # for DEFAULT_TARGET.
    runs_on = "interpret" if backend == "cuda" and not gpu else backend
    candidate_stage.configure_environment(dict(job, backend=runs_on))
    device = "cuda" if gpu else "cpu"
    channel.phase("ir-inputs")
    init, inputs = _inputs(job)
    capture = _capture_for(backend, gpu)
    facts["os_sandbox"] = candidate_stage._forbid_new_processes(backend)
    channel.phase("ir-run")
    path = job["candidate_path"]
    error = _run_candidate(path, init, inputs, int(job.get("seed", 42)), device)
    if error is not None:
        facts["error"] = error
    channel.phase("ir-collect")
    facts["kernels"], facts["target"] = capture.collect(path)
    if backend == "interpret":
        facts["note"] = "the interpret backend compiles nothing: Triton's interpreter runs " \
                        "the kernels' Python directly"
    elif backend == "cuda" and not gpu:
        facts["note"] = ("no GPU visible: the launches were captured on Triton's interpreter "
                         f"and each kernel compiled for sm_{DEFAULT_TARGET[1]} without a device")
    return facts


def _gpu_available():
    try:
        import torch
        return torch.cuda.is_available()
    except Exception:
        return False


def _inputs(job):
    from . import value_pack
    inputs_dir = job["inputs_dir"]
    init_path = os.path.join(inputs_dir, "init.ctp")
    init = value_pack.load(init_path, "cpu") if os.path.exists(init_path) else []
    inputs = value_pack.load(os.path.join(inputs_dir, "inputs_0.ctp"), "cpu")
    return init, inputs


def _run_candidate(path, init, inputs, seed, device):
    """Imports the candidate, builds ModelNew and calls it once; the first user error, or None."""
    import torch
    step = "load"
    try:
        module = loader.import_file(path, MODULE_NAME)
        model_class = module.__dict__.get("ModelNew")
        if not isinstance(model_class, type):
            return {"stage": "load", "message": "the candidate does not define class ModelNew",
                    "line": None, "traceback": ""}
        step = "construct"
        with torch.no_grad():
            model = loader.build_model(model_class, init, seed, device)
            step = "forward"
            candidate_stage._call(model, loader.move_to(inputs, device))
        if device == "cuda":
            torch.cuda.synchronize()
    except BaseException as exc:  # SystemExit and KeyboardInterrupt from user code are facts
        return loader.user_error(exc, path, step)
    return None


def def_line(fn):
    """The line of `fn`'s `def` (its code object's first line is its first decorator's)."""
    try:
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return None
    for offset, text in enumerate(lines):
        if text.lstrip().startswith(("def ", "async def ")):
            return start + offset
    return start


def _source_file(fn):
    try:
        return os.path.realpath(inspect.getsourcefile(fn) or "")
    except TypeError:
        return ""


def _cut(text):
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "\n... (cut)\n"


def _capture_for(backend, gpu):
    if backend == "opencl":
        return _OpenclCapture()
    if backend == "cuda":
        return _CudaCapture() if gpu else _InterpretedCudaCapture()
    return _NoCapture()


class _NoCapture:
    def collect(self, path):
        return [], None


class _OpenclCapture:
    """The shim's compiles, recorded as they happen (class-level, before any candidate code)."""

    def __init__(self):
        from triton import runtime
        self.runtime = runtime
        self.compiled = []
        original = runtime.JITFunction._compile
        compiled = self.compiled

        def _compile(jit, specs, checked=False):
            handle = original(jit, specs, checked)
            if len(compiled) < MAX_KERNELS:
                compiled.append((jit, specs, handle))
            return handle

        runtime.JITFunction._compile = _compile

    def collect(self, path):
        kernels = []
        for jit, specs, handle in self.compiled:
            text, line_map = self.runtime.kernel_ir(handle)
            kernels.append({"name": jit.__name__, "def_line": jit.fdef.lineno,
                            "file": _source_file(jit.fn),
                            "specialization": _spec_text(jit.arg_names, specs),
                            "error": None,
                            "levels": [{"name": "opencl_c", "text": _cut(text),
                                        "line_map": line_map, "error": None}]})
        return kernels, "OpenCL C (crucible_tcl on PoCL)"


def _spec_text(names, specs):
    parts = []
    for name, spec in zip(names, specs):
        kind = spec.get("kind")
        if kind == "constexpr":
            parts.append(f"{name}={spec.get('value')!r}")
        elif kind == "ptr":
            parts.append(f"{name}: *{spec.get('dtype')}")
        else:
            parts.append(f"{name}: {kind}")
    return ", ".join(parts)


def _levels_of(compiled):
    levels = []
    for name in CUDA_LEVELS:
        text = compiled.asm.get(name) if hasattr(compiled, "asm") else None
        if isinstance(text, bytes):
            text = text.decode(errors="replace")
        if isinstance(text, str):
            levels.append({"name": name, "text": _cut(text), "line_map": None, "error": None})
        else:
            levels.append({"name": name, "text": "", "line_map": None,
                           "error": f"Triton kept no {name} for this kernel"})
    return levels


def _cuda_kernel(fn, signature, compiled=None, error=None):
    return {"name": getattr(fn, "__name__", "kernel"), "def_line": def_line(fn),
            "file": _source_file(fn), "specialization": signature, "error": error,
            "levels": _levels_of(compiled) if compiled is not None else []}


def _signature_text(compiled):
    src = getattr(compiled, "src", None)
    sig = getattr(src, "signature", None) or getattr(getattr(compiled, "metadata", None),
                                                     "signature", None)
    consts = getattr(src, "constants", None) or {}
    text = ", ".join(f"{k}: {v}" for k, v in (sig or {}).items() if v != "constexpr")
    names = list((sig or {}).keys())
    for path, value in consts.items():
        index = path[0] if isinstance(path, tuple) and path else path
        name = names[index] if isinstance(index, int) and index < len(names) else str(path)
        text += f", {name}={value!r}"
    return text.lstrip(", ")


class _CudaCapture:
    """On a GPU: every kernel a launch compiled (or found in its cache), as JITFunction.run
    returns it."""

    def __init__(self):
        from triton.runtime import jit
        self.kernels = []  # (python function, compiled kernel)
        original = jit.JITFunction.run
        kernels = self.kernels

        def run(fn, *args, **kwargs):
            compiled = original(fn, *args, **kwargs)
            if compiled is not None and len(kernels) < MAX_KERNELS and \
                    all(c is not compiled for _, c in kernels):
                kernels.append((fn.fn, compiled))
            return compiled

        jit.JITFunction.run = run

    def collect(self, path):
        import torch
        out = [_cuda_kernel(fn, _signature_text(c), c) for fn, c in self.kernels]
        major, minor = torch.cuda.get_device_capability()
        return out, f"cuda sm_{major}{minor} ({torch.cuda.get_device_name()})"


class _InterpretedCudaCapture:
    """Without a GPU: each launch on the interpreter captured (its function and arguments), then
    compiled for DEFAULT_TARGET the way JITFunction.run would on that device."""

    def __init__(self):
        from triton.runtime import interpreter
        self.interpreted = interpreter.InterpretedFunction
        self.launches = []  # (python function, args, kwargs)
        original = interpreter.InterpretedFunction.run
        launches = self.launches

        def run(fn, *args, **kwargs):
            if len(launches) < 4 * MAX_KERNELS:
                launches.append((fn.fn, args, dict(kwargs)))
            return original(fn, *args, **kwargs)

        interpreter.InterpretedFunction.run = run
        # The interpreter patches triton.language with its own builtins, and leaves some patched
        # (a call of a @jit function inside a kernel, tl.max for one): the values before the
        # first patch are kept here and put back before compiling.
        self.pristine = {}
        pristine, set_attr = self.pristine, interpreter._LangPatchScope.set_attr

        def keep_pristine(scope, obj, name, value):
            pristine.setdefault((id(obj), name), (obj, name, getattr(obj, name, _MISSING)))
            return set_attr(scope, obj, name, value)

        interpreter._LangPatchScope.set_attr = keep_pristine

    def _unpatch_language(self):
        for obj, name, value in self.pristine.values():
            if value is _MISSING:
                if hasattr(obj, name):
                    delattr(obj, name)
            else:
                setattr(obj, name, value)
        self.pristine.clear()

    def collect(self, path):
        from triton.backends.compiler import GPUTarget
        from triton.compiler import make_backend
        self._unpatch_language()
        os.environ["TRITON_INTERPRET"] = "0"
        target = GPUTarget(*DEFAULT_TARGET)
        backend = make_backend(target)
        seen, out = set(), []
        for fn, args, kwargs in self.launches:
            kwargs = {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}
            try:
                compiled, signature = self._compile(fn, args, kwargs, target, backend)
            except Exception as exc:  # the kernel's own compile error, shown per kernel
                key = (fn, f"{type(exc).__name__}: {exc}")
                if key not in seen and len(out) < MAX_KERNELS:
                    seen.add(key)
                    out.append(_cuda_kernel(fn, "", error=loader.user_error(exc, path,
                                                                            "compile")))
                continue
            key = (fn, compiled.hash if hasattr(compiled, "hash") else signature)
            if key in seen or len(out) >= MAX_KERNELS:
                continue
            seen.add(key)
            out.append(_cuda_kernel(fn, signature, compiled))
        return out, f"cuda sm_{DEFAULT_TARGET[1]} (compiled without a device)"

    def _compile(self, fn, args, kwargs, target, backend):
        from triton.compiler import ASTSource, compile
        from triton.runtime.jit import JITFunction, create_function_from_signature
        with _jit_helpers(fn, self.interpreted, JITFunction):
            jit = JITFunction(fn)
            binder = create_function_from_signature(jit.signature, jit.params, backend)
            bound, specialization, options = binder(*args, **kwargs)
            options, signature, constexprs, attrs = jit._pack_args(backend, kwargs, bound,
                                                                   specialization, options)
            compiled = compile(ASTSource(jit, signature, constexprs, attrs), target=target,
                               options=options.__dict__)
        text = ", ".join(f"{k}: {v}" for k, v in signature.items() if v != "constexpr")
        for path, value in constexprs.items():
            index = path[0] if path else None
            names = list(signature)
            name = names[index] if isinstance(index, int) and index < len(names) else str(path)
            text += f", {name}={value!r}"
        return compiled, text.lstrip(", ")


class _jit_helpers:
    """While a kernel compiles: the @triton.jit functions it calls (its own helpers and
    Triton's), which the interpreter wrapped, seen by the compiler as JIT functions (in every
    module their globals reach)."""

    def __init__(self, fn, interpreted, jit_function):
        self.fn, self.interpreted, self.jit_function = fn, interpreted, jit_function
        self.saved = []

    def __enter__(self):
        import sys
        # Triton's own @jit functions (tl.max, tl.sum, ...) were wrapped when triton.language
        # was imported under the interpreter.
        todo = [vars(m) for n, m in list(sys.modules.items())
                if m is not None and (n == "triton.language" or n.startswith("triton.language."))]
        todo.append(self.fn.__globals__)
        seen = set()
        while todo:
            scope = todo.pop()
            if id(scope) in seen:
                continue
            seen.add(id(scope))
            for name, value in list(scope.items()):
                if isinstance(value, self.interpreted):
                    self.saved.append((scope, name, value))
                    scope[name] = self.jit_function(value.fn)
                    todo.append(value.fn.__globals__)
        return self

    def __exit__(self, *exc):
        for scope, name, value in reversed(self.saved):
            scope[name] = value
        return False
