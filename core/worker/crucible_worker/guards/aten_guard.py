"""The dispatch mode of checked forward calls: ATen ops outside launches by class, scalar reads,
downcasts, and poison in the tensors `empty*` returns.
"""
import collections
import sys
import torch

from torch.utils._python_dispatch import TorchDispatchMode

from .. import torch_lazy, value_pack
from .aten_ops import POISONED_OPS, _is_downcast, op_base, op_class, op_name

class AtenGuard(TorchDispatchMode):
    """Counts the ATen ops a forward call executes outside Triton launches and poisons the
    uninitialised tensors it allocates.

    `compute` holds "aten::add.Tensor"-style names of compute ops (everything not allocation,
    view, copy, metadata or a scalar read); `by_class` counts every class. Ops inside a launch
    (the interpreter's own argument copies) are neither counted nor poisoned. The mode is
    thread-local in PyTorch: ops a candidate thread runs are not seen (ThreadWatch reports the
    thread).
    """

    def __init__(self, launches, poison=True, code_map=None):
        super().__init__()
        self.launches = launches
        self.poison = poison
        self.code_map = code_map
        self.in_kernel_body = 0   # ops a kernel body ran with torch (the interpreter runs it)
        self.compute = collections.Counter()
        self.by_class = collections.Counter()
        self.scalar_reads = 0
        self.downcasts = 0
        self.poisoned = 0
        # The candidate's lines the compute ops and scalar reads came from (its innermost frame
        # on the stack when the op ran): where a flag about them points.
        self.compute_lines = collections.Counter()
        self.scalar_read_lines = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if self.launches is not None and self.launches.in_launch():
            # Triton's own copies are not the candidate's; torch called from a kernel body
            # (which only the interpreter can run) is.
            if self.code_map is None or not self._from_kernel_body():
                return out
            self.in_kernel_body += 1
        try:
            self._account(func, args, kwargs, out)
        except Exception:  # accounting must never change what the candidate computes
            pass
        return out

    def _from_kernel_body(self):
        try:
            return self.code_map.called_from_user_past_torch(sys._getframe(2))
        except Exception:
            return False

    def _account(self, func, args, kwargs, out):
        if getattr(func, "namespace", None) == "profiler":
            return  # the ATen recorder's own ranges
        base = op_base(func)
        kind = op_class(base)
        self.by_class[kind] += 1
        if kind == "compute":
            self.compute[op_name(func)] += 1
            self._count_line(self.compute_lines)
        elif kind == "scalar_read":
            self.scalar_reads += 1
            self._count_line(self.scalar_read_lines)
        elif kind == "copy":
            self._check_cast(base, args, kwargs, out)
        if self.poison and base in POISONED_OPS and isinstance(out, torch.Tensor):
            value_pack.poison_(out)
            self.poisoned += 1

    def _count_line(self, lines):
        if self.code_map is None:
            return
        line = self.code_map.candidate_line(sys._getframe(2))
        if line is not None:
            lines[line] += 1

    def _check_cast(self, base, args, kwargs, out):
        if base in ("_to_copy", "to"):
            src = args[0] if args else kwargs.get("self")
            if isinstance(src, torch.Tensor) and isinstance(out, torch.Tensor) \
                    and _is_downcast(src.dtype, out.dtype):
                self.downcasts += 1
        elif base in ("copy_", "copy", "_copy_from", "_copy_from_and_resize"):
            dst = args[0] if args else kwargs.get("self")
            src = args[1] if len(args) > 1 else kwargs.get("src")
            if base == "_copy_from" or base == "_copy_from_and_resize":
                src, dst = dst, src
            if isinstance(src, torch.Tensor) and isinstance(dst, torch.Tensor) \
                    and _is_downcast(src.dtype, dst.dtype):
                self.downcasts += 1


# Its first op would otherwise import dynamo (seconds) in every candidate (torch_lazy.py).
torch_lazy.dispatch_mode_without_dynamo(AtenGuard)
