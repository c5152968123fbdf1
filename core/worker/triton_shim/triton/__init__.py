"""Crucible's `triton` shim for the opencl backend (docs/TCL.md).

The worker puts core/worker/triton_shim first on sys.path, so candidate code's `import triton`
lands here. Host-side API in pure Python; kernels are compiled to OpenCL C and run by the C++
library crucible_tcl (see runtime.py)."""

__version__ = "3.6.0+crucible.opencl"
CRUCIBLE_SHIM = True  # the worker's guards patch this package's launch path (guards/launches.py)

import sys  # noqa: E402


class _NotInShim:
    """Last on sys.meta_path: a `triton.*` module the shim does not have gets an error that
    says why (torch.compile and Triton's compiler internals need real Triton), instead of a
    bare 'No module named'."""

    def find_spec(self, name, path=None, target=None):
        if name.startswith("triton."):
            raise ModuleNotFoundError(
                f"No module named '{name}': the opencl backend's triton is Crucible's shim, "
                "which has Triton's language and launch API but not its compiler internals "
                "(so torch.compile and torch._inductor are not available to candidate code "
                "either)", name=name)
        return None


if not any(type(finder).__name__ == "_NotInShim" for finder in sys.meta_path):
    sys.meta_path.append(_NotInShim())

# The package's public names, below the markers so those are set before any submodule loads.
from . import language  # noqa: E402, F401
from .runtime import Config, JITFunction, autotune, heuristics, jit  # noqa: E402, F401


def cdiv(x, y):
    return (x + y - 1) // y


def next_power_of_2(n):
    n = int(n)
    if n <= 1:
        return 1
    return 1 << (n - 1).bit_length()


class CompilationError(Exception):
    """A kernel the opencl backend cannot compile (message: 'line N: ...')."""


class OutOfResources(Exception):
    pass
