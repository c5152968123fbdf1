"""Importing user files, turning their exceptions into facts, and building their models.

User code (a reference or a candidate) is imported by path under a fixed module name. Its
folder is not put on sys.path: a file next to it must not be able to shadow a module the
harness imports, and the candidate's sandbox decides what it may read.
"""
import contextlib
import importlib.util
import os
import random
import sys
import traceback

import torch

TRACEBACK_LIMIT = 4000


class UserCodeError(Exception):
    """A problem with user code, carrying the fact that reports it.

    Raised for problems the harness finds in user code (a missing `get_inputs`, a value of the
    wrong type) and, through `from_exception`, to carry an exception user code raised out of a
    helper so the stage can tell it apart from a failure of the harness itself.
    """

    def __init__(self, message, stage="", line=None, traceback_text=""):
        super().__init__(message)
        self.message = message
        self.stage = stage
        self.line = line
        self.traceback_text = traceback_text

    @classmethod
    def from_exception(cls, exc, path, stage):
        fact = user_error(exc, path, stage)
        error = cls(fact["message"], fact["stage"], fact["line"], fact["traceback"])
        error.__cause__ = exc
        return error

    def to_fact(self):
        return {"stage": self.stage, "message": self.message, "line": self.line,
                "traceback": self.traceback_text}


@contextlib.contextmanager
def user_code(path, stage):
    """Turns anything user code raises (sys.exit too) into a UserCodeError with its line in
    `path`."""
    try:
        yield
    except (Exception, SystemExit) as exc:
        raise UserCodeError.from_exception(exc, path, stage) from exc


def user_error(exc, path, stage):
    """The error fact for an exception raised by (or on behalf of) the user file at `path`.

    `line` is the innermost traceback frame in that file, so it points at the user's line even
    when the exception came from deep inside torch; None when no frame is in the file.
    """
    if isinstance(exc, UserCodeError):
        fact = exc.to_fact()
        fact["stage"] = fact["stage"] or stage
        return fact
    text = _format_traceback(exc)
    if len(text) > TRACEBACK_LIMIT:
        # Keep the end: the innermost frames and the message are what explain the failure.
        text = "...\n" + text[-TRACEBACK_LIMIT:]
    return {"stage": stage, "message": f"{type(exc).__name__}: {_text_of(exc)}",
            "line": _line_in(exc, path), "traceback": text}


def _text_of(exc):
    # User exception classes may define a __str__ that itself fails; the fact must still exist.
    try:
        return str(exc)
    except Exception:
        return f"<unprintable {type(exc).__name__}>"


def _format_traceback(exc):
    try:
        return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    except Exception:
        frames = traceback.format_tb(exc.__traceback__)
        return "".join(frames) + f"{type(exc).__name__}: {_text_of(exc)}\n"


def _line_in(exc, path):
    target = _canonical(path)
    line = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if _canonical(frame.f_code.co_filename) == target:
            line = lineno
    # A syntax error is raised by the compiler, so no frame is in the file: it names the line.
    if line is None and isinstance(exc, SyntaxError) and exc.filename \
            and _canonical(exc.filename) == target:
        line = exc.lineno
    return line


def _canonical(path):
    return os.path.normcase(os.path.realpath(path))


def import_file(path, module_name):
    """Import the file at `path` as module `module_name`; user exceptions propagate unchanged.

    The module is in sys.modules before its code runs, as a normal import would have it, so
    dataclasses and anything else that looks a class's module up by name work.
    """
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise UserCodeError(f"cannot import {path}: not a Python source file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module


def move_to(value, device):
    """`value` with every tensor in it moved to `device` (lists, tuples and dicts rebuilt)."""
    return map_tensors(value, lambda t: t.to(device))


def clone_value(value):
    """`value` with every tensor in it replaced by a fresh copy (other leaves shared)."""
    return map_tensors(value, _clone_tensor)


def _clone_tensor(tensor):
    copy = tensor.detach().clone()
    if tensor.requires_grad:
        copy.requires_grad_(True)
    return copy


def map_tensors(value, fn):
    """`value` with every tensor `t` in it replaced by `fn(t)` (lists, tuples, dicts rebuilt)."""
    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, list):
        return [map_tensors(item, fn) for item in value]
    if isinstance(value, tuple):
        items = [map_tensors(item, fn) for item in value]
        # A namedtuple takes its fields as arguments, a plain tuple takes one iterable.
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if isinstance(value, dict):
        return {key: map_tensors(item, fn) for key, item in value.items()}
    return value


def seed_all(seed, device="cpu"):
    """Seed every generator a KernelBench-style file may draw from: torch (all devices),
    Python's `random` and NumPy's global state. Through `torch.random.manual_seed`: the stages
    may have wrapped `torch.manual_seed` as dynamo does (torch_lazy.py), and the wrapper
    imports dynamo on its first call."""
    torch.random.manual_seed(seed)
    if torch.device(device).type == "cuda":
        torch.cuda.manual_seed_all(seed)
    random.seed(seed)
    try:
        import numpy
    except ImportError:
        return
    numpy.random.seed(seed % 2**32)


def init_arguments(init_value):
    """(args, kwargs) from what `get_init_inputs()` returned.

    KernelBench returns a list of positional arguments. KernelBook returns `[[args...],
    {kwargs}]`; exactly that shape (two items, a list then a dict) is read as args and kwargs.
    """
    if init_value is None:
        return [], {}
    if isinstance(init_value, dict):
        return [], dict(init_value)
    if not isinstance(init_value, (list, tuple)):
        raise UserCodeError("get_init_inputs() must return a list of constructor arguments, "
                            f"not {type(init_value).__qualname__}")
    if len(init_value) == 2 and isinstance(init_value[0], list) and isinstance(init_value[1], dict):
        return list(init_value[0]), dict(init_value[1])
    return list(init_value), {}


def build_model(cls, init_value, seed, device):
    """`torch.manual_seed(seed); cls(*args, **kwargs)` moved to `device`, so the reference and
    the candidate, built the same way, start from identical parameters."""
    args, kwargs = init_arguments(init_value)
    seed_all(seed, device)
    model = cls(*args, **kwargs)
    if not isinstance(model, torch.nn.Module):
        raise UserCodeError(f"{getattr(cls, '__name__', cls)} is not a torch.nn.Module")
    return model.to(device)
