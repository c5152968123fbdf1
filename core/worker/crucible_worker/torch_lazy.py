"""What torch changes in itself when torch._dynamo is first imported, done without importing it.

Importing torch._dynamo costs seconds (it pulls in most of inductor's Python), and a stage that
only runs a module never needs it. But its first import replaces `torch.manual_seed` with a
wrapper, so a stage that snapshots harness-critical functions by identity before candidate code
runs would see that replacement as tampering whenever the candidate (or torch on its behalf)
imports dynamo later. `settle_manual_seed` makes the same replacement up front, the way
torch._dynamo's `__init__` does it; dynamo then finds it done and leaves it alone.

The wrapper imports dynamo on its first call, so the harness seeds through
`torch.random.manual_seed` (the function both names start as), never through the wrapper.

`dispatch_mode_without_dynamo` keeps a TorchDispatchMode's first op from importing dynamo:
torch wraps every mode's `__torch_dispatch__` so that dynamo skips it, and the wrapper imports
dynamo on its first call to build the skipping version.

`forget_triton` answers torch's cached "is there a triton?" probes with no while triton is
blocked, for the opencl backend whose `triton` is Crucible's shim: torch must never take the
shim for the compiler it looks for.
"""
import sys


def settle_manual_seed(torch):
    """Wrap torch.manual_seed as torch._dynamo's import would; fall back to importing dynamo
    where this torch has no `_disable_dynamo` (the wrap then happens the way torch does it)."""
    if "torch._dynamo" in sys.modules or torch.manual_seed is not torch.random.manual_seed:
        return
    disable = getattr(torch, "_disable_dynamo", None)
    if disable is None:
        try:
            import torch._dynamo  # noqa: F401
        except Exception:
            pass
        return
    import torch.jit._builtins

    torch.manual_seed = disable(torch.manual_seed)
    torch.jit._builtins._register_builtin(torch.manual_seed, "aten::manual_seed")


def forget_triton():
    """With `import triton` blocked (sys.modules['triton'] is None), let torch cache that it
    has no triton."""
    try:
        from torch.utils import _triton
    except ImportError:
        return
    for probe in ("has_triton_package", "get_triton_version"):
        fn = getattr(_triton, probe, None)
        if fn is not None:
            try:
                fn()
            except Exception:
                pass


def dispatch_mode_without_dynamo(cls):
    """Give `cls.__torch_dispatch__` (wrapped by torch's `_disable_dynamo`, which reads the
    skipping version from the raw function's `__dynamo_disable` and imports dynamo to build it
    when there is none) a `__dynamo_disable` that calls the raw function while dynamo is not
    imported (nothing can be compiling then) and builds torch's own skipping version once it
    is. A torch that wraps differently is left as it is."""
    wrapper = cls.__dict__.get("__torch_dispatch__")
    raw = getattr(wrapper, "__wrapped__", None)
    if raw is None or getattr(raw, "__dynamo_disable", None) is not None:
        return

    def skip_dynamo(*args, **kwargs):
        dynamo = sys.modules.get("torch._dynamo")
        if dynamo is None:
            return raw(*args, **kwargs)
        try:
            built = dynamo.disable(raw, True, wrapping=False)
        except TypeError:  # a dynamo without the `wrapping` switch
            built = dynamo.disable(raw, True)
        setattr(raw, "__dynamo_disable", built)
        return built(*args, **kwargs)

    setattr(raw, "__dynamo_disable", skip_dynamo)
