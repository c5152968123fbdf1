"""Crucible's `triton` shim for the opencl backend (docs/TCL.md).

The worker puts core/worker/triton_shim first on sys.path, so candidate code's `import triton`
lands here. Host-side API in pure Python; kernels are compiled to OpenCL C and run by the C++
library crucible_tcl (see runtime.py)."""

__version__ = "3.6.0+crucible.opencl"
CRUCIBLE_SHIM = True  # the worker's guards patch this package's launch path (guards/launches.py)

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
