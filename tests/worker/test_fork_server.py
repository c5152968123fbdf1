"""The fork server (fork_server.py) driven the way the C++ side drives it: a control socket at
a descriptor of its own, one request per stage with the stage's descriptors, answers on the
request's own connection."""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile

import pytest

from crucible_worker import fork_server, os_sandbox

WORKER = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "core", "worker",
                                      "worker.py"))


@pytest.fixture(scope="module")
def server():
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    env = {"PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "1",
           "CRUCIBLE_FORK_SERVER_FD": str(theirs.fileno())}
    process = subprocess.Popen([sys.executable, "-I", "-B", WORKER, "fork-server"], env=env,
                               pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL)
    theirs.close()
    ours.settimeout(120)
    hello = json.loads(ours.recv(65536))
    yield ours, hello, process
    ours.close()
    assert process.wait(timeout=30) == 0


class Stage:
    """One request: pipes for stdout, stderr and the channel, and the answers."""

    def __init__(self, control, argv, env, cwd):
        self.conn, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.conn.settimeout(120)
        stdin_r, stdin_w = os.pipe()
        os.close(stdin_w)
        self.pipes = [os.pipe() for _ in range(3)]  # stdout, stderr, channel
        fds = [theirs.fileno(), stdin_r] + [w for _, w in self.pipes]
        request = {"argv": argv, "env": env, "cwd": cwd,
                   "limits": [[4, 0, 0]]}  # RLIMIT_CORE
        socket.send_fds(control, [json.dumps(request).encode()], fds)
        for fd in [stdin_r] + [w for _, w in self.pipes]:
            os.close(fd)
        theirs.close()
        self.pid = json.loads(self.conn.recv(4096))["pid"]

    def finish(self):
        ended = json.loads(self.conn.recv(4096))
        self.conn.send(b"reap")
        outputs = []
        for r, _ in self.pipes:
            with os.fdopen(r, "rb") as f:
                outputs.append(f.read().decode())
        self.conn.close()
        return ended, outputs


def _empty_job(scratch):
    """A static stage's job with nothing to read: it reports two empty analyses."""
    job = os.path.join(scratch, "job.json")
    with open(job, "w") as f:
        f.write("{}")
    return job


def _sandboxed_env(scratch):
    prefix = os.path.dirname(os.path.dirname(sys.executable))
    plan = {"read": [os.path.dirname(WORKER), sys.prefix, prefix], "write": [scratch],
            "hidden": []}
    return {"PATH": "/usr/bin:/bin", "HOME": scratch, "CRUCIBLE_RESULT_FD": "3",
            "CRUCIBLE_SANDBOX": json.dumps(plan)}


def test_the_server_imports_torch_once_and_stays_single_threaded(server):
    _, hello, _ = server
    assert hello["ready"] is True
    assert "torch" in hello, hello
    # A fork from a process with other threads copies their locks, held, into the child.
    assert hello["threads"] == 1
    # The opencl backend's shim needs torch to have asked nothing about triton yet.
    assert hello["triton_imported"] is False


@pytest.mark.skipif(os_sandbox.landlock_abi() < 1, reason="this kernel has no Landlock")
def test_a_forked_stage_runs_in_its_own_group_with_its_walls_and_reports_its_exit(server):
    control, hello, _ = server
    with tempfile.TemporaryDirectory() as scratch:
        job = _empty_job(scratch)
        stage = Stage(control, ["static", job], _sandboxed_env(scratch), scratch)
        assert stage.pid != hello["pid"]
        # Its own session and process group: the parent pauses and kills it by the group.
        assert os.getpgid(stage.pid) == stage.pid
        ended, (out, err, channel) = stage.finish()
    assert ended == {"exit": 0}, err
    facts = json.loads(json.loads(channel.splitlines()[-1])["body"])["facts"]
    assert facts["reference"] is None and facts["candidate"] is None
    assert facts["os_sandbox"]["applied"] is True


def test_a_forked_stage_without_its_walls_does_not_run(server):
    control, _, _ = server
    with tempfile.TemporaryDirectory() as scratch:
        job = _empty_job(scratch)
        env = _sandboxed_env(scratch)
        del env["CRUCIBLE_SANDBOX"]
        ended, (_, err, channel) = Stage(control, ["static", job], env, scratch).finish()
    assert ended == {"exit": fork_server.WALLS_MISSING}
    assert "walls did not all go up" in err
    assert channel == ""


def test_a_stage_killed_by_a_signal_is_reported_as_one(server):
    control, _, _ = server
    with tempfile.TemporaryDirectory() as scratch:
        # Opening a job that is a FIFO nobody writes blocks until the group is killed.
        fifo = os.path.join(scratch, "job.json")
        os.mkfifo(fifo)
        stage = Stage(control, ["static", fifo], {"PATH": "/usr/bin:/bin"}, scratch)
        os.killpg(stage.pid, signal.SIGKILL)
        ended, _ = stage.finish()
    assert ended == {"signal": signal.SIGKILL}


def test_a_request_with_too_few_descriptors_is_refused(server):
    control, _, _ = server
    conn, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    conn.settimeout(30)
    socket.send_fds(control, [b"{}"], [theirs.fileno()])
    theirs.close()
    answer = json.loads(conn.recv(4096))
    assert "error" in answer and "descriptors" in answer["error"]
