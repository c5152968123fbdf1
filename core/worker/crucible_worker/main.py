"""Dispatches a stage: static, reference, baseline (the reference's timer), candidate, trace (the
synthesizer's op graph), synthcheck (the run check of `crucible tasks synth`), profile (a
candidate's launches timed or counted, `crucible profile`) or ir (what runs, kernel by kernel,
for `crucible ir`); or serves as the fork server that starts them (fork_server.py).
docs/WORKER_PROTOCOL.md."""
import inspect
import json
import sys
import traceback

from . import input_monitor, os_sandbox
from .channel import open_channel

STAGES = ("static", "reference", "baseline", "candidate", "synthcheck", "trace", "profile",
          "ir")


def _stage_module(stage):
    if stage == "static":
        from . import static_stage as module
    elif stage == "reference":
        from . import reference_stage as module
    elif stage == "baseline":
        from . import baseline_stage as module
    elif stage == "synthcheck":
        from . import synth_check_stage as module
    elif stage == "trace":
        from . import trace_stage as module
    elif stage == "profile":
        from . import profile_stage as module
    elif stage == "ir":
        from . import ir_stage as module
    else:
        from . import candidate_stage as module
    return module


def main(argv, forked=False):
    """`forked`: this process was forked by the fork server, where the kernel's walls are the
    only ones; a stage that cannot raise them all does not run (the parent starts it again
    inside bubblewrap)."""
    if argv == ["fork-server"] and not forked:
        from . import fork_server
        return fork_server.serve()
    if len(argv) != 2 or argv[0] not in STAGES:
        print("usage: worker.py {" + "|".join(STAGES) + "} JOB.json | fork-server",
              file=sys.stderr)
        return 2
    stage, job_path = argv
    with open(job_path, encoding="utf-8") as f:
        job = json.load(f)
    if stage in ("candidate", "baseline"):
        # Before anything else: the timing sets go to a process of their own, which hands each
        # over when its call runs (input_monitor.py), to the candidate's timer and to the
        # reference's alike (timing_sets.py). Only the timer's side returns.
        input_monitor.start_for_job(job, stage)
    channel = open_channel()
    # The kernel's walls go up before torch exists (its thread pools inherit them).
    sandbox = os_sandbox.apply_at_start()
    if forked:
        sandbox["forked"] = True
    if forked and not sandbox.get("applied"):
        from .fork_server import WALLS_MISSING
        print(f"crucible worker: the kernel's walls did not all go up in a forked stage: "
              f"{sandbox}", file=sys.stderr)
        return WALLS_MISSING
    try:
        facts = _stage_module(stage).run(job, channel)
        # A kept baseline gives one set of facts per session (baseline_stage.py).
        for each in facts if inspect.isgenerator(facts) else [facts]:
            if isinstance(each, dict):
                each["os_sandbox"] = dict(sandbox, **each.get("os_sandbox", {}))
            channel.facts(each)
    except Exception as exc:  # the harness itself failed: report it as infrastructure
        channel.facts({"error": {"stage": "infrastructure",
                                 "message": f"{type(exc).__name__}: {exc}",
                                 "line": None,
                                 "traceback": traceback.format_exc(limit=20)}})
    return 0
