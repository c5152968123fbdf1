"""Crucible's `triton.language` shim (docs/TCL.md): names a kernel uses, resolved by the C++
compiler from the kernel's syntax tree. Calling them outside a kernel is an error, as in Triton."""


class constexpr:
    """Annotation for compile-time parameters; also wraps a value."""

    def __init__(self, value=None):
        self.value = value.value if isinstance(value, constexpr) else value

    def __repr__(self):
        return f"constexpr[{self.value!r}]"


class dtype:
    def __init__(self, name, triton_name):
        self.name = name
        self.triton_name = triton_name

    def __repr__(self):
        return f"triton.language.{self.name}"

    __str__ = __repr__


int1 = dtype("int1", "i1")
int8 = dtype("int8", "i8")
int16 = dtype("int16", "i16")
int32 = dtype("int32", "i32")
int64 = dtype("int64", "i64")
uint32 = dtype("uint32", "u32")
uint64 = dtype("uint64", "u64")
float16 = dtype("float16", "fp16")
bfloat16 = dtype("bfloat16", "bf16")
float32 = dtype("float32", "fp32")
float64 = dtype("float64", "fp64")
dtypes = [int1, int8, int16, int32, int64, uint32, uint64, float16, bfloat16, float32, float64]


def _device_only(name):
    def f(*args, **kwargs):
        raise RuntimeError(f"tl.{name} can only be called inside a @triton.jit kernel")

    f.__name__ = name
    return f


_BUILTINS = (
    "program_id num_programs arange load store where maximum minimum exp exp2 log log2 sqrt rsqrt "
    "abs sigmoid sin cos tan erf floor ceil fma sum max min zeros full cdiv multiple_of "
    "max_contiguous debug_barrier static_print static_assert cast dot reshape trans view "
    "expand_dims broadcast_to argmax argmin cumsum atomic_add atomic_max atomic_min atomic_xchg "
    "atomic_cas make_block_ptr advance static_range range softmax zeros_like clamp umulhi div_rn "
    "fdiv sqrt_rn device_print device_assert rand randn randint randint4x rand4x randn4x umulhi "
    "reduce associative_scan cumprod broadcast atomic_and atomic_or atomic_xor permute"
).split()
for _n in _BUILTINS:
    globals()[_n] = _device_only(_n)

from . import math as math  # noqa: E402
from . import extra as extra  # noqa: E402
