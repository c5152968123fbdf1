"""ATen work recorded below the dispatch mode (PyTorch's profiler, RecordFunction in C++), in
ranges named with a per-run secret.
"""
import collections
import os

import torch

from .aten_ops import op_class

class _NoRange:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_NO_RANGE = _NoRange()


_has_kernel = torch._C._dispatch_has_kernel_for_dispatch_key  # bound before candidate code


def _range_class():
    """The context manager that opens a named range in the profiler's record, bound before any
    candidate code exists. PyTorch's C++ one where this torch has it: `record_function` enters
    through a dispatcher op and Python objects, and a range opens around every forward call
    and every Triton launch, inside the timed calls."""
    fast = getattr(getattr(torch._C, "_profiler", None), "_RecordFunctionFast", None)
    if fast is not None:
        return fast
    from torch.autograd.profiler import record_function
    return record_function


_Range = _range_class()
_COMPOSITE = {}


def _composite(base):
    """Whether every overload of aten::`base` is CompositeImplicitAutograd (implemented by
    calling other ops, each recorded as a child)."""
    known = _COMPOSITE.get(base)
    if known is None:
        known = False
        try:
            packet = getattr(torch.ops.aten, base)
            names = [f"aten::{base}" + ("" if o == "default" else f".{o}")
                     for o in packet.overloads()]
            known = bool(names) and all(_has_kernel(n, "CompositeImplicitAutograd")
                                        for n in names)
        except Exception:
            pass
        _COMPOSITE[base] = known
    return known


def _recorded_events(profile):
    """Every recorded event (any depth) and the name of its children attribute.

    The C++ event tree (`experimental_event_tree`) where this torch has one: building the
    Python FunctionEvent list instead costs about a millisecond per forward call (seconds
    after the outside check's calls), the tree milliseconds in all. The FunctionEvent list
    otherwise."""
    results = getattr(profile, "kineto_results", None)
    tree = getattr(results, "experimental_event_tree", None)
    if tree is None:
        return profile.function_events or [], "cpu_children"
    out, pending = [], list(tree())
    while pending:
        event = pending.pop()
        out.append(event)
        pending.extend(event.children)
    return out, "children"


class AtenRecorder:
    """ATen ops recorded below the dispatch mode, by PyTorch's profiler (RecordFunction
    callbacks in C++, CPU activity only), for the whole run of forward calls.

    A TorchDispatchMode sees only ops that reach Python dispatch; private switches
    (`torch._C._DisableTorchDispatch`, excluded dispatch keys, popped modes) take ops past it,
    and its tallies are Python objects. The profiler's callbacks sit in the dispatcher itself
    and its records in C++. Every guarded forward call runs inside a range named with a secret
    of this run and its stage, every launch and every candidate callable inside one inside
    ranges of their own; an op counts when it is the outermost ATen op of a forward range and
    not inside a launch (Triton's own copies), unless inside the candidate's callable there.
    The profiler stays on for the whole run, so being watched is not a phase either. A forward
    range missing from the record means the profiler was switched off while it ran."""

    def __init__(self):
        self._profile = None
        self._secret = os.urandom(8).hex()
        self.expected = collections.Counter()  # stage -> forward ranges opened
        self.disabled_seen = 0
        self.error = None
        self._children = "children"

    def start(self):
        # The autograd profiler itself, not torch.profiler's wrapper: the wrapper's start asks
        # `hasattr(torch, "_inductor")`, which imports inductor and dynamo (seconds).
        from torch.autograd.profiler import profile
        try:
            self._profile = profile(use_cpu=True, use_kineto=True)
            self._profile.__enter__()
        except Exception as exc:  # a torch without a usable profiler: say so, run without it
            self._profile = None
            self.error = f"{type(exc).__name__}: {exc}"[:300]

    @property
    def active(self):
        return self._profile is not None

    def range(self, kind):
        return _Range(f"crucible::{kind}::{self._secret}")

    def forward(self, stage):
        if not self.active:
            return _NO_RANGE
        self.expected[stage] += 1
        return self.range("forward::" + stage)

    def check_enabled(self):
        if self.active and not torch.autograd._profiler_enabled():
            self.disabled_seen += 1

    def stop(self):
        """Ends the recording without reading it (a timer that only pays what recording costs)."""
        profile, self._profile = self._profile, None
        if profile is not None:
            profile.__exit__(None, None, None)

    def finish(self):
        """{"ok", "forward_ranges", "expected", "compute": {stage: {op: n}}, ...}"""
        facts = {"ok": False, "error": self.error, "forward_ranges": {},
                 "expected": dict(self.expected), "compute": {},
                 "disabled_seen": self.disabled_seen}
        if self._profile is None:
            return facts
        try:
            self._profile.__exit__(None, None, None)
            events, self._children = _recorded_events(self._profile)
        except Exception as exc:
            facts["error"] = f"the profiler's record could not be read: {type(exc).__name__}"
            return facts
        prefix = "crucible::forward::"
        suffix = f"::{self._secret}"
        ranges, compute = collections.Counter(), {}
        for event in events:
            name = event.name
            if not (name.startswith(prefix) and name.endswith(suffix)):
                continue
            stage = name[len(prefix):-len(suffix)]
            ranges[stage] += 1
            found = compute.setdefault(stage, collections.Counter())
            self._visit(event, found, inside_launch=False)
        facts["forward_ranges"] = dict(ranges)
        facts["compute"] = {stage: dict(c) for stage, c in compute.items() if c}
        facts["ok"] = True
        return facts

    def _visit(self, event, found, inside_launch):
        for child in getattr(event, self._children):
            name = child.name
            if name.endswith("::" + self._secret):
                kind = name.split("::")[1]
                if kind == "launch":
                    self._visit(child, found, inside_launch=True)
                elif kind == "user":
                    self._visit(child, found, inside_launch=False)
                continue
            if name.startswith("aten::"):
                base = name[len("aten::"):]
                if _composite(base):
                    # No kernel of its own: whatever it did is in its children (item() is a
                    # scalar read, dropout in eval mode nothing at all).
                    self._visit(child, found, inside_launch)
                elif not inside_launch and op_class(base) == "compute":
                    found[name] += 1
                continue  # the ops a kernel calls are its own implementation
            self._visit(child, found, inside_launch)


