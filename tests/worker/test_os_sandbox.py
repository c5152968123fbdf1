"""The kernel's walls a worker raises around itself (os_sandbox.py), tried from a fresh process
the way a candidate would: every attempt runs after the walls are up, in that process."""
import json
import os
import subprocess
import sys
import tempfile
import textwrap

import pytest

from crucible_worker import os_sandbox

pytestmark = pytest.mark.skipif(os_sandbox.landlock_abi() < 1,
                                reason="this kernel has no Landlock")

WORKER_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "core", "worker"))

PROBE = textwrap.dedent("""
    import json, os, socket, subprocess, sys, threading
    sys.path.insert(0, WORKER_DIR)
    from crucible_worker import os_sandbox
    results = {"start": os_sandbox.apply_at_start()}

    def attempt(name, action):
        try:
            action()
            results[name] = "allowed"
        except OSError as exc:
            results[name] = type(exc).__name__

    def write(path):
        with open(path, "w") as f:
            f.write("x")

    attempt("read_hidden", lambda: open(os.path.join(JOB, "ref", "expected.txt")).read())
    attempt("read_kept", lambda: open(os.path.join(JOB, "src", "kept.txt")).read())
    attempt("write_scratch", lambda: write(os.path.join(JOB, "scratch", "out.txt")))
    attempt("write_elsewhere", lambda: write(os.path.join(JOB, "src", "new.txt")))
    attempt("write_own_memory", lambda: open("/proc/self/mem", "r+b"))
    attempt("ip_socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
    attempt("signal_parent", lambda: os.kill(os.getppid(), 0))
    attempt("exec_before", lambda: subprocess.run(["/bin/true"], check=True))
    attempt("new_session", os.setsid)

    def sysv_shm():
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        segment = libc.shmget(0, 4096, 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600
        if segment < 0:
            raise OSError(ctypes.get_errno(), "shmget")
        libc.shmctl(segment, 0, None)  # IPC_RMID

    attempt("sysv_before", sysv_shm)
    results["processes"] = os_sandbox.forbid_processes(allow_spawn=SPAWN)
    attempt("sysv_after", sysv_shm)
    if SPAWN:
        results["executables"] = os_sandbox.restrict_execution(["/bin/true", "/usr/bin/true"])
        attempt("exec_listed", lambda: subprocess.run(["/bin/true"], check=True))
        attempt("exec_unlisted", lambda: subprocess.run(["/bin/ls"], check=True,
                                                         stdout=subprocess.DEVNULL))
        attempt("exec_new_session", lambda: subprocess.run(["/bin/true"], check=True,
                                                           start_new_session=True))
    attempt("fork", lambda: os.waitpid(os.fork(), 0) if True else None)
    attempt("exec_after", lambda: subprocess.run([sys.executable, "-c", "pass"], check=True))
    box = []
    thread = threading.Thread(target=lambda: box.append(sum(range(1000))))
    thread.start()
    thread.join()
    results["thread"] = box == [499500]
    print(json.dumps(results))
""")


def _probe(spawn):
    with tempfile.TemporaryDirectory() as root:
        job = os.path.join(root, "job")
        for sub in ("ref", "src", "scratch"):
            os.makedirs(os.path.join(job, sub))
        for path in (os.path.join(job, "ref", "expected.txt"),
                     os.path.join(job, "src", "kept.txt")):
            with open(path, "w") as f:
                f.write("secret")
        plan = {"read": [os.path.join(job, "src")], "write": [os.path.join(job, "scratch")],
                "hidden": [root]}
        env = dict(os.environ, CRUCIBLE_SANDBOX=json.dumps(plan))
        code = f"WORKER_DIR = {WORKER_DIR!r}\nJOB = {job!r}\nSPAWN = {spawn!r}\n" + PROBE
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def walled():
    return _probe(spawn=False)


def test_the_walls_report_what_held(walled):
    start = walled["start"]
    assert start["applied"] is True
    assert start["files"]["landlock"] >= 1 and start["syscalls"]["applied"] is True
    assert walled["processes"] == {"applied": True, "spawn": "none"}


def test_files_other_than_the_plans_cannot_be_read_or_written(walled):
    assert walled["read_hidden"] == "PermissionError"
    assert walled["read_kept"] == "allowed"
    assert walled["write_scratch"] == "allowed"
    assert walled["write_elsewhere"] == "PermissionError"
    assert walled["write_own_memory"] == "PermissionError"


def test_network_and_other_processes_are_out_of_reach(walled):
    assert walled["ip_socket"] == "PermissionError"
    if walled["start"]["files"]["landlock"] >= 6:
        assert walled["signal_parent"] == "PermissionError"


def test_no_process_leaves_the_stages_group_and_no_ipc_outlives_it(walled):
    # A process in a session of its own outlives the kill of the stage's group.
    assert walled["new_session"] == "PermissionError"
    assert walled["sysv_before"] == "allowed"
    assert walled["sysv_after"] == "PermissionError"


def test_no_new_process_once_the_candidate_may_run(walled):
    assert walled["exec_before"] == "allowed"
    assert walled["fork"] == "PermissionError"
    assert walled["exec_after"] == "PermissionError"
    assert walled["thread"] is True


def test_a_compiling_backend_runs_only_its_listed_tools():
    spawning = _probe(spawn=True)
    assert spawning["processes"]["spawn"] == "toolchain only"
    assert spawning["exec_listed"] == "allowed"
    assert spawning["exec_unlisted"] == "PermissionError"
    assert spawning["exec_new_session"] == "PermissionError"
    assert spawning["exec_after"] == "PermissionError"  # the interpreter is not a listed tool
    assert spawning["fork"] == "PermissionError"


def test_no_plan_means_no_walls(monkeypatch):
    monkeypatch.delenv(os_sandbox.ENV, raising=False)
    assert os_sandbox.apply_at_start()["applied"] is False
