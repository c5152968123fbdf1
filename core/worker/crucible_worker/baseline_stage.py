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

from . import (device_lock, guards, inductor_settings, loader, timing, timing_sets, turns,
               value_pack)
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
    model = compiled = source = first = None
    settings = dict(DEFAULT_TIMING, **(job.get("timing") or {}))
    try:
        channel.phase("baseline-load")
        model, first, source = _load(job, device)
        if settings["compile_baseline"]:
            channel.phase("baseline-compile")
            compiled, compile_error = _compile(model, first, device, lock, load_record)
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
                    facts["timing"] = _rounds(model, compiled, source, first, device, settings,
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
    """The reference's model, built as the reference stage builds it; the first trial's inputs
    placed on the device (the compile's, the warm-up calls' and the reserved buffers' shape, as
    the candidate's timer has them), and where the timed calls' sets come from
    (timing_sets.py)."""
    path, seed = job["reference_path"], int(job["seed"])
    with _user_code(path):
        module = loader.import_file(path, MODULE_NAME)
        loader.seed_all(seed, device)
        init = module.get_init_inputs()
        model = loader.build_model(module.Model, init, seed, device)
    count = max(1, int(job.get("timing_sets", 1)))
    from . import input_monitor
    source = input_monitor.client() or timing_sets.FileBytes(job["inputs_dir"], count)
    warm = os.path.join(job["inputs_dir"], "inputs_0.ctp")
    if not os.path.exists(warm):
        warm = os.path.join(job["inputs_dir"], "timing_0.ctp")
    first = loader.move_to(value_pack.load(warm, "cpu"), device)
    return model, first, source


def _rounds(model, compiled, source, first, device, settings, turn_keeper, lock, record, path):
    """Eager (and compiled) samples per round, each round one turn; the whole measurement's
    calls and minimum time are shared out over the rounds."""
    # The candidate's timed calls run under the ATen recorder (PyTorch's profiler on for the
    # whole run, each call in a range of its own), which costs every op and launch something,
    # most after a handover. The reference's calls pay the same, so that what the comparison
    # shows is the kernels and not the watching.
    recorder = guards.AtenRecorder()
    recorder.start()
    try:
        slots = timing.round_slots(source.count, int(settings["rounds"]))
        timers = _Timers(source, first, device, settings, len(slots))
        eager, fast, compile_error = [], [], None
        eager_fn = _recorded(model, recorder)
        fast_fn = None if compiled is None else _recorded(compiled, recorder)
        for k, round_sets in enumerate(slots):
            with turn_keeper.turn(k), torch.no_grad(), lock.exclusive(record):
                with _user_code(path):
                    eager.append(timers.measure("eager", eager_fn, round_sets))
                if fast_fn is not None and compile_error is None:
                    try:
                        fast.append(timers.measure("compile", fast_fn, round_sets))
                    except Exception as exc:
                        compile_error = f"{type(exc).__name__}: {exc}"[:2000]
    finally:
        recorder.stop()
    # The medians count each set's first call in its round, the calls at the same places as
    # the ones the candidate's median counts; later calls on a set are in the samples.
    result = {"rounds": len(slots), "compile_error": compile_error}
    _summarise(result, "eager", eager, slots)
    _summarise(result, "compile", fast if compiled is not None and compile_error is None
               else None, slots)
    return result


class _Timers:
    """The reference's timers, eager and compiled, each taking every timing set as the candidate
    does: handed over just before its first timed call (timing_sets.py), after a warm-up on the
    first trial's inputs, already placed."""

    def __init__(self, source, first, device, settings, rounds):
        self._timer = timing.Timer(device)
        self._first = first
        self._sets = {name: timing_sets.OnDevice(timing_sets.HandedOver(source, value_pack),
                                                 loader, value_pack, device, like=first)
                      for name in ("eager", "compile")}
        self._reps = timing.per_round(int(settings["reps"]), rounds)
        self._min_time_s = timing.per_round(float(settings["min_time_s"]), rounds)
        self._max_reps = timing.per_round(timing.MAX_REPS, rounds)
        # The full warm-up in every round, as the candidate does: the wait for the turn leaves
        # caches cold, thread pools asleep and a GPU's clocks down, and the first calls after it
        # are slower. The candidate counts each set's first call, which comes right after it.
        self._warmup = int(settings["warmup"])

    def measure(self, name, fn, round_sets):
        sets = self._sets[name]
        sets.reserve(round_sets)
        try:
            return timing.measure(self._timer, fn, sets, self._warmup, self._reps,
                                  self._min_time_s, self._max_reps, slots=round_sets,
                                  warmup_sets=[self._first])
        finally:
            sets.release(round_sets)


def _recorded(model, recorder):
    """`model`'s calls, each in a timing range of `recorder`, as the candidate's timed calls."""
    def call(*inputs):
        with recorder.forward("timing"):
            return model(*inputs)
    return call


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
