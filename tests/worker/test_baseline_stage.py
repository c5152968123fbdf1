"""The baseline stage (the reference's timer) and the turns it takes with the candidate: rounds
over the reference stage's timing sets, grants read from a descriptor, and the end to end run
through worker.py with grants on stdin."""
import hashlib
import hmac
import json
import os
import subprocess
import sys
import threading

import pytest

from crucible_worker import baseline_stage, reference_stage, timing, turns

from test_reference_stage import MATMUL_REFERENCE, RecordingChannel, make_job, write_reference

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WORKER = os.path.join(REPO, "core", "worker", "worker.py")


class TurnChannel(RecordingChannel):
    def __init__(self):
        super().__init__()
        self.turns = []
        self.sessions = []

    def turn(self, state, index, **details):
        self.turns.append((state, index))
        self.sessions.append(details.get("session"))


def baseline_job(tmp_path, source, timing_settings, timing_sets=4):
    """A reference run that wrote `timing_sets` timing sets, and the baseline job over them."""
    job = make_job(tmp_path, write_reference(tmp_path, source), trials=1,
                   timing_sets=timing_sets)
    facts = reference_stage.run(job, RecordingChannel())
    assert facts["error"] is None and facts["timing_sets"] == timing_sets
    return {"reference_path": job["reference_path"], "inputs_dir": job["inputs_dir"],
            "backend": "interpret", "seed": job["seed"], "timing_sets": timing_sets,
            "timing": timing_settings}


def test_rounds_share_out_the_calls_over_the_timing_sets(tmp_path):
    job = baseline_job(tmp_path, MATMUL_REFERENCE,
                       {"warmup": 1, "reps": 8, "min_time_s": 0.0, "compile_baseline": False,
                        "rounds": 4})
    channel = TurnChannel()
    facts = baseline_stage.run(job, channel)
    json.dumps(facts, allow_nan=False)
    t = facts["timing"]
    assert facts["error"] is None and t["rounds"] == 4
    assert [len(r) for r in t["eager_rounds_ms"]] == [2, 2, 2, 2]
    assert t["eager_samples_ms"] == [ms for r in t["eager_rounds_ms"] for ms in r]
    # One set a round, two calls on it: the median counts each set's first call.
    assert t["eager_fresh_rounds_ms"] == [r[:1] for r in t["eager_rounds_ms"]]
    assert t["eager_ms"] == timing.median([r[0] for r in t["eager_rounds_ms"]])
    assert t["compile_ms"] is None and t["compile_rounds_ms"] is None
    # Every round asked for and ended as a turn; run on its own, none was granted.
    assert channel.turns == [(s, k) for k in range(4) for s in ("ready", "done")]
    assert facts["turns"] == {"asked": 4, "granted": 0, "waited_s": 0.0,
                              "unpaired": "no turns were given"}


def test_a_round_extends_to_its_share_of_the_minimum_time(tmp_path):
    # A forward of known duration: the count does not depend on the machine's load.
    source = MATMUL_REFERENCE.replace("        return torch.matmul(a, b)",
                                      "        import time; time.sleep(0.01)\n"
                                      "        return a * 2")
    job = baseline_job(tmp_path, source, {"warmup": 0, "reps": 2, "min_time_s": 0.1,
                                          "compile_baseline": False, "rounds": 2}, timing_sets=2)
    t = baseline_stage.run(job, TurnChannel())["timing"]
    rounds = t["eager_rounds_ms"]
    assert len(rounds) == 2
    # Only each set's first call in its round counts, as on the candidate's side.
    assert t["eager_fresh_rounds_ms"] == [r[:1] for r in rounds]
    assert t["eager_ms"] == timing.median([r[0] for r in rounds])
    for samples in rounds:  # each round: its one set, then repeats until 50 ms
        assert len(samples) > 1 and sum(samples) >= 50 and sum(samples[:-1]) < 50


def test_each_timer_takes_each_set_handed_over_at_its_first_timed_call(tmp_path, monkeypatch):
    # As the candidate's timer: the sets come as bytes when their first timed call is due, once
    # per timer (eager, then compiled), and the warm-up calls never touch them.
    from crucible_worker import timing_sets
    events = []
    fetch = timing_sets.FileBytes.fetch
    monkeypatch.setattr(timing_sets.FileBytes, "fetch",
                        lambda self, j: events.append(("fetch", j)) or fetch(self, j))
    measure = timing.measure

    def recorded(timer, fn, *args, **kwargs):
        def call(*inputs):
            events.append(("call", None))
            return fn(*inputs)
        return measure(timer, call, *args, **kwargs)

    monkeypatch.setattr(timing, "measure", recorded)
    job = baseline_job(tmp_path, MATMUL_REFERENCE,
                       {"warmup": 2, "reps": 8, "min_time_s": 0.0, "compile_baseline": True,
                        "rounds": 2})
    facts = baseline_stage.run(job, TurnChannel())
    assert facts["error"] is None and facts["timing"]["compile_ms"] is not None
    # Per round and timer: two warm-up calls, then sets j and j+1 fetched just before their
    # first timed calls (4 calls over the 2 sets).
    expected = []
    for first in (0, 2):
        for _ in ("eager", "compiled"):
            expected += [("call", None)] * 2
            expected += [("fetch", first), ("call", None), ("fetch", first + 1),
                         ("call", None), ("call", None), ("call", None)]
    assert events == expected


def test_the_reference_is_timed_under_the_recorder_the_candidate_is_timed_under(tmp_path):
    # Watching costs every call something; both sides pay it, and the profiler is off after.
    import sys
    import torch
    source = MATMUL_REFERENCE.replace(
        "        return torch.matmul(a, b)",
        "        SEEN.append(torch.autograd._profiler_enabled())\n"
        "        return torch.matmul(a, b)").replace("M, K, N =", "SEEN = []\nM, K, N =")
    job = baseline_job(tmp_path, source, {"warmup": 1, "reps": 4, "min_time_s": 0.0,
                                          "compile_baseline": False, "rounds": 2})
    facts = baseline_stage.run(job, TurnChannel())
    assert facts["error"] is None
    seen = sys.modules[baseline_stage.MODULE_NAME].SEEN
    assert len(seen) == 2 * (1 + 2) and all(seen)  # per round: a warm-up call, two timed
    assert not torch.autograd._profiler_enabled()


def test_round_slots_split_the_sets_in_order():
    assert timing.round_slots(10, 5) == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]
    assert timing.round_slots(3, 5) == [[0], [1], [2]]  # never more rounds than sets
    assert timing.round_slots(7, 3) == [[0, 1], [2, 3], [4, 5, 6]]
    assert timing.per_round(10, 3) == 4 and timing.per_round(0.3, 3) == pytest.approx(0.1)


def test_turns_wait_for_each_grant():
    read_fd, write_fd = os.pipe()
    channel = TurnChannel()
    keeper = turns.Turns(channel, read_fd, wait_limit_s=30)
    order = []

    def grant_later():
        for k in range(2):
            while ("ready", k) not in channel.turns:
                threading.Event().wait(0.01)
            order.append(f"grant {k}")
            os.write(write_fd, b"g")

    granter = threading.Thread(target=grant_later)
    granter.start()
    for k in range(2):
        with keeper.turn(k):
            order.append(f"round {k}")
    granter.join()
    assert order == ["grant 0", "round 0", "grant 1", "round 1"]
    assert keeper.facts()["granted"] == 2 and keeper.facts()["unpaired"] is None
    os.close(write_fd)  # the parent ends the turns: the rest run at once, and it is said
    with keeper.turn(2):
        pass
    assert keeper.facts()["asked"] == 3 and keeper.facts()["granted"] == 2
    assert keeper.facts()["unpaired"] == "the parent ended the turns"


def test_a_grant_that_does_not_come_ends_the_waiting():
    read_fd, write_fd = os.pipe()
    keeper = turns.Turns(TurnChannel(), read_fd, wait_limit_s=0.2)
    with keeper.turn(0):
        pass
    with keeper.turn(1):  # no second wait
        pass
    os.close(write_fd)
    facts = keeper.facts()
    assert facts["granted"] == 0 and facts["unpaired"].startswith("no turn was granted within")
    assert 0.2 <= facts["waited_s"] < 5


def test_a_kept_baseline_times_one_session_per_opening_and_an_abandoned_one_not_at_all(tmp_path):
    """One load for several sessions: each session's rounds wait for their grants, `a` in
    place of a grant abandons a session untimed, `n` opens the next and the stream's end ends
    the stage."""
    job = baseline_job(tmp_path, MATMUL_REFERENCE,
                       {"warmup": 0, "reps": 2, "min_time_s": 0.0, "compile_baseline": False,
                        "rounds": 2}, timing_sets=2)
    job["kept"] = True
    read_fd, write_fd = os.pipe()
    turns.keep_grant_fd(read_fd)
    channel = TurnChannel()
    sessions = baseline_stage.run(job, channel)
    os.write(write_fd, b"gg")
    first = next(sessions)
    os.write(write_fd, b"n" + b"a")
    abandoned = next(sessions)
    os.write(write_fd, b"n" + b"gg")
    third = next(sessions)
    os.close(write_fd)
    with pytest.raises(StopIteration):
        next(sessions)
    assert [f["session"] for f in (first, abandoned, third)] == [0, 1, 2]
    for timed in (first, third):
        assert timed["error"] is None and not timed["abandoned"]
        assert [len(r) for r in timed["timing"]["eager_rounds_ms"]] == [1, 1]
        assert timed["turns"] == {"asked": 2, "granted": 2, "waited_s": timed["turns"]["waited_s"],
                                  "unpaired": None}
    assert abandoned["abandoned"] and abandoned["timing"] is None
    assert abandoned["turns"]["asked"] == 1 and abandoned["turns"]["granted"] == 0
    # The abandoned session asked for its first turn and never said it was done.
    assert channel.turns == [("ready", 0), ("done", 0), ("ready", 1), ("done", 1), ("ready", 0),
                             ("ready", 0), ("done", 0), ("ready", 1), ("done", 1)]
    assert channel.sessions == [0, 0, 0, 0, 1, 2, 2, 2, 2]
    # Only one load for the three sessions.
    assert channel.phases.count("baseline-load") == 1


def test_baseline_through_the_worker_with_grants_on_stdin(tmp_path):
    """End to end through worker.py, with torch.compile (inductor's C++ backend on the CPU) and
    the grants after the channel's key on stdin. Slow (tens of seconds on two cores)."""
    job = baseline_job(tmp_path, MATMUL_REFERENCE,
                       {"warmup": 1, "reps": 3, "min_time_s": 0.0, "compile_baseline": True,
                        "rounds": 3}, timing_sets=3)
    job_path = tmp_path / "job.json"
    job_path.write_text(json.dumps(job))
    read_fd, write_fd = os.pipe()
    env = dict(os.environ, CRUCIBLE_RESULT_FD=str(write_fd), CRUCIBLE_CHANNEL_KEY="stdin",
               CRUCIBLE_TURNS="stdin")
    key = b"test-key"
    process = subprocess.Popen(
        [sys.executable, "-I", "-B", WORKER, "baseline", str(job_path)],
        pass_fds=(write_fd,), env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT)
    os.close(write_fd)
    process.stdin.write(key + b"\n" + b"g" * 3)  # the key line, then one grant per round
    process.stdin.flush()
    with os.fdopen(read_fd, "rb") as channel:
        lines = [json.loads(line) for line in channel.read().splitlines()]
    process.stdin.close()
    process.stdin = None
    log = process.communicate(timeout=600)[0]
    for line in lines:  # the key was read up to its newline, not into the grants
        expected = hmac.new(key, line["body"].encode(), hashlib.sha256).hexdigest()
        assert hmac.compare_digest(line["mac"], expected)
    messages = [json.loads(line["body"]) for line in lines]
    assert process.returncode == 0, log.decode(errors="replace")[-3000:]
    assert "baseline-compile" in [m.get("name") for m in messages]
    assert [(m["state"], m["index"]) for m in messages if m["type"] == "turn"] == \
        [(s, k) for k in range(3) for s in ("ready", "done")]
    facts = messages[-1]["facts"]
    assert facts["error"] is None
    assert facts["turns"]["granted"] == 3 and facts["turns"]["unpaired"] is None
    t = facts["timing"]
    assert t["compile_error"] is None, t["compile_error"]
    assert t["compile_ms"] > 0 and [len(r) for r in t["compile_rounds_ms"]] == [1, 1, 1]
    assert [len(r) for r in t["eager_rounds_ms"]] == [1, 1, 1]


COMPILE_ONCE = """
import sys, torch
from crucible_worker import inductor_settings
cache = sys.argv[1]
inductor_settings.configure(cache)
compiled = torch.compile(torch.nn.ReLU())
x = torch.randn(8, 64)
assert torch.equal(compiled(x), torch.relu(x))
inductor_settings.remember(cache)
"""


def test_a_persistent_compile_cache_keeps_no_header_in_the_job_and_the_vector_check(tmp_path):
    """The baseline's compile leaves nothing in the job's temporary folder (no precompiled
    header rebuilt per run) and keeps inductor's vector-instruction answer beside its cache,
    which the next run takes instead of starting a second Python to find it again."""
    from crucible_worker import inductor_settings
    import torch._inductor.config as config

    cache, tmp = tmp_path / "inductor", tmp_path / "job-tmp"
    cache.mkdir()
    tmp.mkdir()
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(cache), TMPDIR=str(tmp),
               PYTHONPATH=os.path.join(REPO, "core", "worker"))
    done = subprocess.run([sys.executable, "-c", COMPILE_ONCE, str(cache)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not list(tmp.rglob("precompiled_headers")), list(tmp.rglob("*"))[:10]
    marker = json.loads((cache / inductor_settings.MARKER).read_text())
    assert marker["ok"] is True and marker["key"] == inductor_settings._machine_key()

    saved = (config.cpp.vec_isa_ok, config.cpp_cache_precompile_headers)
    try:
        config.cpp.vec_isa_ok = None
        inductor_settings.configure(str(cache))
        assert config.cpp.vec_isa_ok is True
        assert config.cpp_cache_precompile_headers is False
        # An answer kept for another torch or processor is not taken.
        (cache / inductor_settings.MARKER).write_text(json.dumps({"key": "other", "ok": False}))
        config.cpp.vec_isa_ok = None
        inductor_settings.configure(str(cache))
        assert config.cpp.vec_isa_ok is None
    finally:
        config.cpp.vec_isa_ok, config.cpp_cache_precompile_headers = saved
