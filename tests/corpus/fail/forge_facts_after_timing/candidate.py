"""A PyTorch passthrough that forges the worker's report once the real measurements are done.

The worker writes the outputs it observed (value packs) as it goes, and its facts (what ran,
which ATen ops, launches, tampering, timing) as one JSON message on a pipe at the very end.
This candidate lets every output be recorded honestly (its answers are PyTorch's, so they are
right), and when it sees that timing is over (timed_0_0.ctp exists in its working folder) it
writes a clean facts message to every pipe it holds beyond stdin/stdout/stderr and exits with
status 0, before the worker can report what really happened. The pipes are found by probing
/proc/self/fd/N with os.stat, which raises no audit event; no try/except is used.

During the no-op run (every Triton launch replaced by nothing) the decoy kernel leaves its
scratch buffer unwritten; forward notices and returns the scratch buffer, so the no-op output
differs and the faithfulness test passes too.
"""
import json
import os
import stat
import sys

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(a_ptr, b_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a + b, mask=mask)


def _pipes():
    fds = []
    for fd in range(3, 1024):
        path = f"/proc/self/fd/{fd}"
        if os.path.exists(path) and stat.S_ISFIFO(os.stat(path).st_mode):
            fds.append(fd)
    return fds


def _timing_done():
    job_dir = os.path.dirname(sys.argv[-1]) if len(sys.argv) >= 3 else ""
    return os.path.exists("timed_0_0.ctp") or \
        (job_dir != "" and os.path.exists(os.path.join(job_dir, "cand", "timed_0_0.ctp")))


def _report_clean_and_exit():
    trials = 5
    calls = trials + 4
    facts = {
        "env": {"python": sys.version.split()[0], "torch": torch.__version__,
                "triton": triton.__version__, "cuda": None, "device_name": "cpu"},
        "sandboxed_view": {"cwd": os.getcwd(), "uid": os.getuid()},
        "load": {"ok": True, "error": None},
        "construct": {"ok": True, "error": None},
        "trials": [{"index": k, "ok": True, "error": None, "launches": 1, "ms": 20.0}
                   for k in range(trials)],
        "alt": {"ran": True, "ok": True, "error": None},
        "launches": {"forward_total": calls, "train": 1, "eval": 1,
                     "by_kernel": {"add_kernel": calls}},
        "aten_ops": {"forward": {}, "eval": {}},
        "scalar_reads": 0,
        "foreign_calls": {},
        "outputs": [{"trial": 0, "index": 0, "type": "torch.Tensor", "plain": True,
                     "problem": None}],
        "input_mutation": {"detected": False, "trials": []},
        "threads": {"before": 1, "after": 1, "started": []},
        "noop": {"ran": True, "error": None},
        "eval_mode": {"ran": True, "error": None},
        # Slow enough that no "reported faster than measured from outside" check can object.
        "timing": {"median_ms": 20.0, "samples_ms": [20.0] * 10, "reps": 10, "warmup": 2,
                   "check_reps": 5, "error": None},
        "tampering": [],
        "audit": [],
        "casts": {"downcasts": 0},
    }
    data = (json.dumps({"type": "phase", "name": "timing-check-end"}) + "\n" +
            json.dumps({"type": "facts", "facts": facts}) + "\n").encode()
    for fd in _pipes():
        os.write(fd, data)
    os._exit(0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if _timing_done():
            _report_clean_and_exit()
        scratch = torch.empty_like(a)
        n = a.numel()
        add_kernel[(triton.cdiv(n, 1024),)](a.contiguous(), b.contiguous(), scratch, n,
                                            BLOCK=1024)  # decoy
        out = a + b
        if not torch.equal(scratch, out):
            return scratch  # the launches were made no-ops: look faithful
        return out
