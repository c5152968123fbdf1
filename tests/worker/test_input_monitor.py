"""The input monitor (input_monitor.py), in a fresh process as the worker uses it: the timing
sets leave the candidate's side before it goes on, come back one at a time, and the worker
ends as its candidate side ended."""
import os
import signal
import subprocess
import sys
import textwrap

WORKER_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "core", "worker"))

CHILD = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, WORKER_DIR)
    from crucible_worker import input_monitor
    client = input_monitor.start_for_job({"private_inputs": True, "timing_sets": 3,
                                          "inputs_dir": INPUTS})
    # Only the candidate's side gets here.
    left = sorted(os.listdir(INPUTS))
    got = [client.fetch(j) for j in (0, 1, 2, 3)]
    try:
        client.fetch(5)  # the monitor hands out set 4 (empty): another request took one
        stolen = "not seen"
    except input_monitor.HandOverMismatch as exc:
        stolen = "seen"
    print("THEFT", stolen, flush=True)
    print("LEFT", left, flush=True)
    print("GOT", [g.decode() for g in got], flush=True)
    print("PARENT_IS_MONITOR", os.getppid() != ORIGINAL_PARENT, flush=True)
    if ENDING == "signal":
        os.kill(os.getpid(), 15)
    sys.exit(EXIT)
""")


def _run(tmp_path, ending="exit", code=0):
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    for j in range(3):
        (inputs / f"timing_{j}.ctp").write_bytes(f"set{j}".encode())
    (inputs / "inputs_0.ctp").write_bytes(b"trial")
    script = (f"WORKER_DIR = {WORKER_DIR!r}\nINPUTS = {str(inputs)!r}\nENDING = {ending!r}\n"
              f"EXIT = {code}\nORIGINAL_PARENT = {os.getpid()}\n" + CHILD)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    return done, inputs


def test_the_sets_leave_before_the_candidate_side_goes_on_and_come_back_in_order(tmp_path):
    done, inputs = _run(tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "LEFT ['inputs_0.ctp']" in out  # the timing sets' files are gone, the rest stays
    assert "GOT ['set0', 'set1', 'set2', '']" in out  # past the last set: empty
    assert "THEFT seen" in out  # an out-of-order request shows
    assert "PARENT_IS_MONITOR True" in out
    assert sorted(os.listdir(inputs)) == ["inputs_0.ctp"]


def test_the_worker_ends_as_its_candidate_side_did(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    exited, _ = _run(tmp_path / "a", code=3)
    assert exited.returncode == 3, exited.stderr
    killed, _ = _run(tmp_path / "b", ending="signal")
    assert killed.returncode == -signal.SIGTERM, killed.stderr


def test_no_monitor_without_a_private_copy_of_the_inputs():
    from crucible_worker import input_monitor
    assert input_monitor.start_for_job({"timing_sets": 3, "inputs_dir": "/nonexistent"}) is None
    assert input_monitor.start_for_job({"private_inputs": True, "timing_sets": 0}) is None


REPLAY_CHILD = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, WORKER_DIR)
    from crucible_worker import input_monitor
    client = input_monitor.start_for_job({"timing_sets": 3, "inputs_dir": INPUTS}, "baseline")
    print("LEFT", sorted(os.listdir(INPUTS)), flush=True)
    print("GOT", [client.fetch(j).decode() for j in (2, 0, 2, 1)], flush=True)
""")


def test_the_reference_timers_monitor_replays_any_set_and_leaves_the_files(tmp_path):
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    for j in range(3):
        (inputs / f"timing_{j}.ctp").write_bytes(f"set{j}".encode())
    script = f"WORKER_DIR = {WORKER_DIR!r}\nINPUTS = {str(inputs)!r}\n" + REPLAY_CHILD
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert "LEFT ['timing_0.ctp', 'timing_1.ctp', 'timing_2.ctp']" in done.stdout
    assert "GOT ['set2', 'set0', 'set2', 'set1']" in done.stdout
