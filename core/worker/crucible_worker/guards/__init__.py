"""The candidate stage's guards: what the worker watches while candidate code runs, one module
per mechanism.

Each guard is separate and reports facts; none of them decides anything.

* `LaunchTracker`: counts Triton launches per kernel name by patching Triton's launch entry
  points (JIT, interpreted, autotuned, heuristics, compiled kernels). It keeps an `in_launch`
  depth so torch and numpy work Triton does itself (the interpreter copies arguments with torch
  and runs kernels with numpy) is not blamed on the candidate, and has a no-op switch that makes
  every launch do nothing (the no-op faithfulness test).
* `AtenGuard`: a TorchDispatchMode for forward calls. It counts ATen ops executed outside
  launches by class (allocation, view, copy, metadata, compute), scalar reads and downcasts,
  and poisons the tensors `empty*`/`new_empty*` return.
* `ForeignCallProfiler`: a `sys.setprofile` hook counting calls into numpy, scipy, math and
  other non-torch libraries that candidate code makes (forward check runs only).
* `ThreadWatch`: threads alive before and after forward calls, and every thread start
  (through `_thread.start_new_thread`, which `threading` also uses) with the candidate line.
* `Auditor`: a `sys.addaudithook` hook, installed before the candidate is imported, that
  records audit events it attributes to the candidate and blocks its sandbox violations.
* `ChannelGuard`: refuses candidate writes, closes and dups aimed at the result channel.
* `IdentitySnapshot`: harness-critical functions by identity, to list what was replaced.

Attribution (audit events, thread starts, foreign calls) walks the Python stack from the
innermost frame. Candidate code is the candidate file and any other code that is not a library
(exec'd strings, files elsewhere). The standard library and third-party libraries are
transparent (a `subprocess.run` from the candidate is the candidate's), except that torch and
Triton, the harness itself and the import machinery are trusted: an event they raise on their
own behalf (Triton running ptxas, torch reading its files) is theirs, not the candidate's.
"""
from .aten_guard import AtenGuard
from .aten_ops import op_base, op_class, op_name
from .aten_recorder import AtenRecorder
from .auditor import DIRECT, HARNESS_ONLY, SANDBOX, TAMPERING, WALK, Auditor
from .channel_guard import ChannelGuard
from .code_map import (CANDIDATE, EXEC, IMPORT, INTROSPECT, LIB, STDLIB, TRUSTED, USER, WORKER,
                       CodeMap)
from .foreign_calls import ForeignCallProfiler
from .identity import IdentitySnapshot
from .launches import LaunchTracker, kernel_name
from .threads import ThreadWatch

__all__ = [
    "AtenGuard", "AtenRecorder", "Auditor", "ChannelGuard", "CodeMap", "ForeignCallProfiler",
    "IdentitySnapshot", "LaunchTracker", "ThreadWatch", "kernel_name", "op_base", "op_class",
    "op_name", "CANDIDATE", "USER", "WORKER", "TRUSTED", "IMPORT", "STDLIB", "INTROSPECT", "LIB",
    "EXEC", "SANDBOX", "TAMPERING", "WALK", "DIRECT", "HARNESS_ONLY",
]
