"""Bytes and FLOPs of a launch, counted while Triton's interpreter runs it (TRITON_INTERPRET=1).

The interpreter executes a kernel program by program through one `InterpreterBuilder`, whose
`create_*` methods do each operation on NumPy arrays holding a whole block. Those methods are
wrapped here (on the class, so the interpreter's single builder sees them) to count, while a
launch is being counted:

* bytes: every load and store requests (mask true) elements times the element's size; an
  atomic reads and writes its element (twice its size). Bytes the kernel's loads and stores
  request, not DRAM traffic after caches: a value loaded twice counts twice.
* FLOPs: one per element of the result for floating-point add, sub, mul, div, rem, min and
  max and for each math function (exp, exp2, log, log2, sin, cos, sqrt, rsqrt, erf, floor,
  ceil, abs); two for fma and clamp; 2*M*N*K for tl.dot (per batch); a sum, max or min
  reduction adds its input's elements minus its output's. Integer and pointer arithmetic,
  comparisons, selects, casts and data movement count nothing. A masked-off element still
  counts: the program computes the whole block. A reduction with a combine function of the
  candidate's counts through the operations that function does.

A launch that runs longer than the cap is stopped between programs and reported as not counted
(with how many programs it got through); the forward call goes on with its later launches.
"""
import numpy as np

# Floating-point operations that cost one FLOP per element of their result.
_ONE_FLOP = ("create_fadd", "create_fsub", "create_fmul", "create_fdiv", "create_frem",
             "create_precise_divf", "create_minimumf", "create_minnumf", "create_maximumf",
             "create_maxnumf", "create_exp", "create_exp2", "create_log", "create_log2",
             "create_sin", "create_cos", "create_sqrt", "create_precise_sqrt", "create_rsqrt",
             "create_erf", "create_floor", "create_ceil", "create_fabs")
_TWO_FLOPS = ("create_fma", "create_clampf")


class CountCapExceeded(Exception):
    """Raised between programs when a launch has been counted for longer than the cap."""


class OpCounter:
    """Wraps the interpreter's builder; `count(record, launch)` runs one launch counted."""

    def __init__(self, cap_s):
        import time
        self._clock = time.monotonic
        self.cap_s = float(cap_s)
        self.active = None  # the counts of the launch being counted, else None
        self._deadline = None
        self._programs = 0

    def install(self):
        from triton.runtime import interpreter
        builder = interpreter.InterpreterBuilder
        for name in _ONE_FLOP:
            self._wrap_result(builder, name, 1)
        for name in _TWO_FLOPS:
            self._wrap_result(builder, name, 2)
        self._wrap_memory(builder)
        self._wrap_dot(builder)
        self._wrap_grid(builder)
        self._wrap_reductions(interpreter.ReduceOps)

    # -- one launch

    def count(self, record, launch):
        """Runs `launch` with the counters on and writes its figures into `record`."""
        counts = {"bytes_read": 0, "bytes_written": 0, "flops": 0}
        self.active = counts
        self._programs = 0
        started = self._clock()
        self._deadline = started + self.cap_s
        record["counted"] = False
        try:
            result = launch()
        except CountCapExceeded:
            record["reason"] = (f"counting stopped after {self.cap_s:g} s, "
                                f"{self._programs - 1} programs in")
            return None
        except Exception as exc:
            if _caused_by_cap(exc):
                record["reason"] = (f"counting stopped after {self.cap_s:g} s, "
                                    f"{self._programs - 1} programs in")
                return None
            raise
        finally:
            self.active = None
            record["count_seconds"] = round(self._clock() - started, 3)
            record["programs"] = self._programs
        record.update(counts)
        record["counted"] = True
        record["reason"] = None
        return result

    # -- wrappers

    def _wrap_result(self, builder, name, per_element):
        original = getattr(builder, name, None)
        if original is None:
            return
        counter = self

        def op(self, *args, **kwargs):
            out = original(self, *args, **kwargs)
            counts = counter.active
            if counts is not None:
                counts["flops"] += per_element * _elements(out)
            return out

        setattr(builder, name, op)

    def _wrap_memory(self, builder):
        counter = self
        load, store = builder.create_masked_load, builder.create_masked_store
        rmw, cas = builder.create_atomic_rmw, builder.create_atomic_cas

        def create_masked_load(self, ptrs, mask, *args, **kwargs):
            counts = counter.active
            if counts is not None:
                counts["bytes_read"] += _active(ptrs, mask) * _element_bytes(ptrs)
            return load(self, ptrs, mask, *args, **kwargs)

        def create_masked_store(self, ptrs, value, mask, *args, **kwargs):
            counts = counter.active
            if counts is not None:
                counts["bytes_written"] += _active(ptrs, mask) * _element_bytes(ptrs)
            return store(self, ptrs, value, mask, *args, **kwargs)

        def create_atomic_rmw(self, op, ptr, val, mask, *args, **kwargs):
            counts = counter.active
            if counts is not None:
                n = _active(ptr, mask) * _element_bytes(ptr)
                counts["bytes_read"] += n
                counts["bytes_written"] += n
            return rmw(self, op, ptr, val, mask, *args, **kwargs)

        def create_atomic_cas(self, ptr, cmp, val, *args, **kwargs):
            counts = counter.active
            if counts is not None:
                n = _active(ptr, None) * _element_bytes(ptr)
                counts["bytes_read"] += n
                counts["bytes_written"] += n
            return cas(self, ptr, cmp, val, *args, **kwargs)

        builder.create_masked_load = create_masked_load
        builder.create_masked_store = create_masked_store
        builder.create_atomic_rmw = create_atomic_rmw
        builder.create_atomic_cas = create_atomic_cas

    def _wrap_dot(self, builder):
        counter = self
        original = builder.create_dot

        def create_dot(self, a, b, d, *args, **kwargs):
            counts = counter.active
            if counts is not None:
                counts["flops"] += _dot_flops(a, b)
            return original(self, a, b, d, *args, **kwargs)

        builder.create_dot = create_dot

    def _wrap_grid(self, builder):
        """The cap is checked as each program starts."""
        counter = self
        original = builder.set_grid_idx

        def set_grid_idx(self, x, y, z):
            if counter.active is not None:
                counter._programs += 1
                if counter._clock() > counter._deadline:
                    raise CountCapExceeded()
            return original(self, x, y, z)

        builder.set_grid_idx = set_grid_idx

    def _wrap_reductions(self, reduce_ops):
        counter = self
        original = reduce_ops.apply_impl
        import triton.language as tl
        fast = {tl.standard._sum_combine, tl.standard._elementwise_max,
                tl.standard._elementwise_min}

        def apply_impl(self, input):
            out = original(self, input)
            counts = counter.active
            if counts is not None and self.combine_fn in fast and input:
                first = input[0]
                if first.dtype.scalar.is_floating():
                    outputs = out if isinstance(out, (list, tuple)) else (out,)
                    counts["flops"] += max(0, _elements(first.handle) -
                                           _elements(outputs[0].handle))
            return out

        reduce_ops.apply_impl = apply_impl


def _elements(handle):
    data = getattr(handle, "data", None)
    return int(np.size(data)) if data is not None else 0


def _active(ptrs, mask):
    """How many of a block's elements a masked access touches."""
    shape = np.shape(ptrs.data)
    if mask is None:
        return int(np.prod(shape, dtype=np.int64))
    return int(np.count_nonzero(np.broadcast_to(np.asarray(mask.data), shape)))


def _element_bytes(ptrs):
    bits = ptrs.get_element_ty().primitive_bitwidth
    return max(1, bits // 8)


def _dot_flops(a, b):
    """2*M*N*K for (..., M, K) @ (..., K, N), times the batch."""
    sa, sb = np.shape(a.data), np.shape(b.data)
    if len(sa) < 2 or len(sb) < 2:
        return 0
    m, k = sa[-2], sa[-1]
    n = sb[-1]
    batch = int(np.prod(sa[:-2], dtype=np.int64)) if len(sa) > 2 else 1
    return 2 * int(m) * int(n) * int(k) * batch


def _caused_by_cap(exc):
    """The interpreter wraps what a program raised in its own InterpreterError."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, CountCapExceeded):
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False
