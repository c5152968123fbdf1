"""Harness-critical functions by identity, to list what was replaced while candidate code ran.
"""
import inspect
import sys


_CRITICAL = [
    "time.perf_counter", "time.perf_counter_ns", "time.time", "time.time_ns", "time.monotonic",
    "time.monotonic_ns", "time.process_time", "time.sleep",
    "torch.cuda.synchronize", "torch.cuda.Event", "torch.cuda.Event.elapsed_time",
    "torch.cuda.Event.record", "torch.cuda.Event.synchronize", "torch.cuda.current_stream",
    "torch.cuda.Stream", "torch.cuda.empty_cache",
    "torch.allclose", "torch.isclose", "torch.equal", "torch.manual_seed", "torch.no_grad",
    "torch.Tensor.__eq__", "torch.Tensor.__ne__", "torch.Tensor.clone", "torch.Tensor.copy_",
    "torch.Tensor.cpu", "torch.Tensor.contiguous", "torch.Tensor.detach", "torch.Tensor.to",
    "torch.Tensor.data_ptr", "torch.Tensor.untyped_storage", "torch.Tensor.view",
    "torch.Tensor.numpy", "torch.Tensor.as_subclass", "torch.nn.Module.__call__",
    "torch.nn.Module._call_impl", "torch.nn.Module.eval", "torch.nn.Module.train",
    "builtins.print", "builtins.open", "builtins.len", "builtins.isinstance", "builtins.type",
    "builtins.id", "builtins.getattr", "builtins.setattr", "builtins.hasattr",
    "builtins.__import__", "builtins.iter", "builtins.next", "builtins.sum", "builtins.min",
    "builtins.max", "builtins.sorted", "builtins.range",
    "triton.jit", "triton.autotune", "triton.heuristics", "triton.testing.do_bench",
    "json.dumps", "json.loads", "os.write", "os.replace", "os.fsync", "os.getpid",
    "sys.setprofile", "sys.getprofile", "sys.exit", "sys.audit",
    "threading.enumerate", "threading.active_count",
    "crucible_worker.value_pack.save", "crucible_worker.value_pack.load",
    "crucible_worker.value_pack.poison_", "crucible_worker.value_pack.count_poison",
    "crucible_worker.value_pack.tensors_in",
    "crucible_worker.timing.Timer", "crucible_worker.timing.Timer.time_call",
    "crucible_worker.timing._perf_counter_ns", "crucible_worker.timing._cuda_synchronize",
    "crucible_worker.timing._CudaEvent", "crucible_worker.timing.wants_more",
    "crucible_worker.candidate_stage._perf_counter",
    "crucible_worker.timing.sync", "crucible_worker.timing.median",
    "crucible_worker.timing.measure",
    "crucible_worker.loader.clone_value", "crucible_worker.loader.move_to",
    "crucible_worker.channel.Channel", "crucible_worker.channel.Channel._write",
    "crucible_worker.channel.Channel.facts", "crucible_worker.channel.Channel.phase",
    "crucible_worker.guards.auditor.Auditor._hook",
    "crucible_worker.guards.aten_guard.AtenGuard.__torch_dispatch__",
    "crucible_worker.guards.aten_recorder.AtenRecorder.finish",
    "crucible_worker.guards.aten_recorder.AtenRecorder._visit",
    "crucible_worker.guards.aten_recorder.AtenRecorder.forward",
    "crucible_worker.guards.aten_recorder.AtenRecorder.range",
    "torch.autograd.profiler.record_function", "torch.autograd.profiler.profile",
    "torch.profiler.profile",
    "torch.autograd._profiler_enabled",
]

_MISSING = object()


def _split_root(label):
    """(module name, attribute chain) with the longest module prefix present in sys.modules."""
    parts = label.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        name = ".".join(parts[:cut])
        if name in sys.modules:
            return name, parts[cut:]
    return None, parts


def _resolve(root, chain):
    obj = root
    for part in chain:
        try:
            if isinstance(obj, type):
                obj = inspect.getattr_static(obj, part, _MISSING)
            else:
                obj = getattr(obj, part, _MISSING)
        except Exception:  # a replacement object whose attribute lookup fails
            return _MISSING
        if obj is _MISSING:
            return _MISSING
    return obj


class IdentitySnapshot:
    """Harness-critical objects by identity: `changed()` lists what was replaced since, and
    `restore()` puts the originals back (so the harness keeps measuring with its own tools)."""

    def __init__(self, extra=None):
        self.entries = []   # (label, module name, module, chain, original)
        labels = list(_CRITICAL)
        extra = dict(extra or {})
        for label in labels:
            self._add(label)
        known = {entry[0] for entry in self.entries}
        for label, value in extra.items():
            name, chain = _split_root(label)
            if name is not None and label not in known:
                self.entries.append((label, name, sys.modules[name], chain, value))
        self.modules = {name: module for _, name, module, _, _ in self.entries}
        # every object along each label's path, so a replaced intermediate can be put back
        self._originals_by_path = {}
        for _, _name, module, chain, original in self.entries:
            for depth in range(1, len(chain) + 1):
                value = original if depth == len(chain) else _resolve(module, chain[:depth])
                if value is not _MISSING:
                    self._originals_by_path.setdefault((id(module), tuple(chain[:depth])),
                                                       value)

    def _add(self, label):
        name, chain = _split_root(label)
        if name is None:
            return
        module = sys.modules[name]
        value = _resolve(module, chain)
        if value is _MISSING:
            return
        self.entries.append((label, name, module, chain, value))

    def _submodules_replaced(self):
        """(parent, attribute, module) for each submodule (torch.cuda) no longer reachable as
        an attribute of its parent."""
        out = []
        for name, module in self.modules.items():
            parent_name, dot, attr = name.rpartition(".")
            parent = self.modules.get(parent_name) or sys.modules.get(parent_name) if dot else None
            if parent is None:
                continue
            try:
                current = getattr(parent, attr, _MISSING)
            except Exception:
                current = _MISSING
            if current is not module:
                out.append((parent, attr, name, module))
        return out

    def changed(self):
        out = []
        for name, module in self.modules.items():
            if sys.modules.get(name) is not module:
                out.append(f"sys.modules['{name}']")
        for _, _, name, _ in self._submodules_replaced():
            out.append(name)
        for label, _, module, chain, original in self.entries:
            if _resolve(module, chain) is not original:
                out.append(label)
        return out

    def restore(self):
        """Put replaced objects back; returns what had been replaced."""
        changed = self.changed()
        for name, module in self.modules.items():
            if sys.modules.get(name) is not module:
                sys.modules[name] = module
        for parent, attr, _, module in self._submodules_replaced():
            try:
                setattr(parent, attr, module)
            except Exception:
                pass
        for _label, _, module, chain, original in self.entries:
            if _resolve(module, chain) is original:
                continue
            # Restore from the outside in: a replaced module attribute (torch.cuda) first.
            for depth in range(1, len(chain) + 1):
                owner = _resolve(module, chain[:depth - 1])
                expected = self._originals_by_path.get((id(module), tuple(chain[:depth])))
                if expected is None or owner is _MISSING:
                    continue
                try:
                    if _resolve(owner, chain[depth - 1:depth]) is not expected:
                        setattr(owner, chain[depth - 1], expected)
                except Exception:
                    pass
        return changed
