"""The `baseline` stage: the reference's timer. It runs beside the candidate's stage and times
the reference, eager and under torch.compile, in rounds that alternate with the candidate's
(turns.py), on the timing sets the reference stage wrote: the same sets, the same thread count
and the same moments' load as the candidate's timed calls (docs/WORKER_PROTOCOL.md, "baseline").

Its model is built as the reference stage builds it (the public seed, get_init_inputs()); the
reference already ran once without error, so a failure here is still the reference's and is
reported with its line.

A kept baseline (`kept` in the job) stays alive after its facts and times the next candidate's
rounds when the parent opens another session (turns.py), compiled once for all of them: the
same reference, settings and timing sets (docs/WORKER_PROTOCOL.md, "Kept baseline").
"""
import contextlib
import itertools
import os
import signal
import threading
import time

import torch

from . import device_lock, inductor_settings, loader, timing, turns, value_pack
from .loader import UserCodeError

STAGE = "baseline"
MODULE_NAME = "crucible_reference"
COMPILE_LIMIT_S = 120
DEFAULT_TIMING = {"warmup": 3, "reps": 20, "min_time_s": 0.2, "compile_baseline": True,
                  "rounds": 5}


def run(job, channel):
    """The session's facts; for a kept baseline (`kept`), a generator of every session's facts,
    one per candidate, until the parent ends the grant stream."""
    sessions = _sessions(job, channel)
    if job.get("kept"):
        return sessions
    try:
        return next(sessions)
    finally:
        sessions.close()


def _sessions(job, channel):
    """Loads and compiles the reference once, then times one session of rounds at a time."""
    device = torch.device("cuda") if job.get("backend") == "cuda" else torch.device("cpu")
    threads = timing.use_threads(job)
    if job.get("backend") == "interpret":
        os.environ.setdefault("TRITON_INTERPRET", "1")  # as the reference stage does
    grant_fd = turns.take_grant_fd()
    lock = device_lock.DeviceLock(job.get("device_lock"))
    load_record, error, compile_error = {}, None, None
    model = compiled = sets = None
    settings = dict(DEFAULT_TIMING, **(job.get("timing") or {}))
    try:
        channel.phase("baseline-load")
        model, sets = _load(job, device)
        if settings["compile_baseline"]:
            channel.phase("baseline-compile")
            compiled, compile_error = _compile(model, sets[0], device, lock, load_record)
    except UserCodeError as exc:
        error = exc.to_fact()
    try:
        for session in itertools.count():
            kept = {"session": session} if job.get("kept") else {}
            turn_keeper = turns.Turns.for_stage(channel, job, grant_fd, **kept)
            facts = {"env": timing.env_facts(device), "timing": None, "error": error,
                     # the compile's waits belong to the session it ran in, the first
                     "device_lock": dict(load_record) if session == 0 else {},
                     "turns": None, "session": session,
                     "abandoned": False}
            if error is None:
                channel.phase("baseline-rounds", **kept)
                try:
                    facts["timing"] = _rounds(model, compiled, sets, device, settings,
                                              turn_keeper, lock, facts["device_lock"],
                                              job["reference_path"])
                    facts["timing"]["threads"] = threads
                    if facts["timing"]["compile_error"] is None:
                        facts["timing"]["compile_error"] = compile_error
                except UserCodeError as exc:
                    facts["error"] = exc.to_fact()
                except turns.Abandoned:
                    facts["abandoned"] = True
            facts["turns"] = turn_keeper.facts()
            yield facts
            if not turn_keeper.open or not turns.next_session(grant_fd):
                return
    finally:
        lock.close()


def _load(job, device):
    """The reference's model, built as the reference stage builds it, and the timing sets on
    the device."""
    path, seed = job["reference_path"], int(job["seed"])
    with _user_code(path):
        module = loader.import_file(path, MODULE_NAME)
        loader.seed_all(seed, device)
        init = module.get_init_inputs()
        model = loader.build_model(module.Model, init, seed, device)
    sets = []
    for j in range(max(1, int(job.get("timing_sets", 1)))):
        pack = os.path.join(job["inputs_dir"], f"timing_{j}.ctp")
        sets.append(loader.move_to(value_pack.load(pack, "cpu"), device))
    return model, sets


def _rounds(model, compiled, sets, device, settings, turn_keeper, lock, record, path):
    """Eager (and compiled) samples per round, each round one turn; the whole measurement's
    calls and minimum time are shared out over the rounds."""
    timer = timing.Timer(device)
    slots = timing.round_slots(len(sets), int(settings["rounds"]))
    reps = timing.per_round(int(settings["reps"]), len(slots))
    min_time_s = timing.per_round(float(settings["min_time_s"]), len(slots))
    max_reps = timing.per_round(timing.MAX_REPS, len(slots))
    eager, fast, compile_error = [], [], None
    for k, round_sets in enumerate(slots):
        # The full warm-up in every round, as the candidate does: the wait for the turn leaves
        # caches cold, thread pools asleep and a GPU's clocks down, and the first calls after it
        # are slower. The candidate counts each set's first call, which comes right after it.
        warmup = int(settings["warmup"])
        with turn_keeper.turn(k), torch.no_grad(), lock.exclusive(record):
            with _user_code(path):
                eager.append(timing.measure(timer, model, sets, warmup, reps, min_time_s,
                                            max_reps, slots=round_sets))
            if compiled is not None and compile_error is None:
                try:
                    fast.append(timing.measure(timer, compiled, sets, warmup, reps, min_time_s,
                                               max_reps, slots=round_sets))
                except Exception as exc:
                    compile_error = f"{type(exc).__name__}: {exc}"[:2000]
    # The medians count each set's first call in its round, the calls at the same places as
    # the ones the candidate's median counts; later calls on a set are in the samples.
    result = {"rounds": len(slots), "compile_error": compile_error}
    _summarise(result, "eager", eager, slots)
    _summarise(result, "compile", fast if compiled is not None and compile_error is None
               else None, slots)
    return result


def _summarise(result, name, rounds, slots):
    """`<name>_rounds_ms` (every call, per round), `<name>_samples_ms` (every call),
    `<name>_fresh_rounds_ms` (each set's first call, per round) and `<name>_ms` (their
    median); None where nothing was timed."""
    fresh = [r[:len(s)] for r, s in zip(rounds, slots)] if rounds else None
    result[f"{name}_rounds_ms"] = rounds
    result[f"{name}_samples_ms"] = [ms for r in rounds for ms in r] if rounds else None
    result[f"{name}_fresh_rounds_ms"] = fresh
    counted = [ms for r in fresh for ms in r] if fresh else []
    result[f"{name}_ms"] = timing.median(counted) if counted else None


class _CompileTimeout(BaseException):
    """BaseException, so no `except Exception` inside torch.compile can swallow it."""


def _compile(model, inputs, device, lock, record):
    """(torch.compile(model), None) compiled on one call, or (None, why not). It compiles beside
    other workers' device work (the shared lock), never during anyone's timing."""
    cache_dir = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    try:
        inductor_settings.configure(cache_dir)
        compiled = torch.compile(model)
        with torch.no_grad(), _deadline(COMPILE_LIMIT_S), lock.shared(record):
            compiled(*loader.clone_value(inputs))
            timing.sync(device)
        if device.type == "cpu":
            inductor_settings.remember(cache_dir)
        return compiled, None
    except _CompileTimeout:
        return None, f"torch.compile took longer than {COMPILE_LIMIT_S} s"
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}"[:2000]


def _user_code(path):
    return loader.user_code(path, STAGE)


@contextlib.contextmanager
def _deadline(seconds):
    """Raise _CompileTimeout in this thread after `seconds` (SIGALRM; main thread only, so
    elsewhere it only checks the time afterwards)."""
    if threading.current_thread() is not threading.main_thread():
        start = time.monotonic()
        yield
        if time.monotonic() - start > seconds:
            raise _CompileTimeout()
        return

    def expire(signum, frame):
        raise _CompileTimeout()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        # None: the previous handler was not set from Python; the default is the closest.
        signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)
