"""The fork server: one process that imports torch once and forks a fresh worker per stage.

Importing torch costs seconds; every stage paid it again. The server imports it, never runs any
user code and never starts a thread, and then waits on its control socket (fd 3, a
SOCK_SEQPACKET socket whose other end only the C++ side holds) for requests. Each request is a
stage's argv, environment, working folder and resource limits, with the descriptors the stage
gets (a connection of its own for the answers, stdin, stdout, stderr and the result channel).

The server forks; the child becomes exactly what `python -I -B worker.py STAGE JOB` would have
been after importing torch: a session and process group of its own (the parent signals, pauses
and kills it by that group), the descriptors in place and every other one closed, the limits,
the folder and the environment set, and then the same `main`, which raises the kernel's walls
(Landlock, seccomp) before any user code exists. A forked child insists on those walls: without
them it exits with WALLS_MISSING before the stage runs, and the parent runs the stage the
classic way (a fresh interpreter inside bubblewrap).

Answers on the request's own connection: {"pid": P} from the child once it leads its own
process group, {"exit": N} or {"signal": S}
when the child ends (its status is peeked, not taken, so its process group stays reserved
while the parent kills what it left behind), and then the parent's "reap" (or its end closing)
lets the server reap it. docs/WORKER_PROTOCOL.md, "Fork server".
"""
import ctypes
import json
import os
import random
import selectors
import signal
import socket
import sys
import time
import traceback

WALLS_MISSING = 75  # EX_TEMPFAIL: run this stage again the classic way
CHILD_SETUP_FAILED = 70
_MAX_REQUEST = 1 << 20
_MAX_FDS = 5
_PR_SET_PDEATHSIG = 1


def serve():
    """Imports torch, says hello, and serves requests until the control socket closes."""
    control = socket.socket(fileno=int(os.environ.pop("CRUCIBLE_FORK_SERVER_FD", "3")))
    hello = {"ready": True, "pid": os.getpid()}
    started = time.perf_counter()
    try:
        import torch
        hello["torch"] = torch.__version__
    except Exception as exc:  # the children will meet the same error and report it
        hello["torch_error"] = f"{type(exc).__name__}: {exc}"[:300]
    hello["import_s"] = round(time.perf_counter() - started, 3)
    from . import os_sandbox
    hello["landlock_abi"] = os_sandbox.landlock_abi()
    hello["threads"] = len(os.listdir("/proc/self/task"))
    hello["triton_imported"] = "triton" in sys.modules
    control.send(json.dumps(hello).encode())
    _Server(control).loop()
    return 0


class _Child:
    def __init__(self, pid, conn):
        self.pid = pid
        self.conn = conn
        self.pidfd = os.pidfd_open(pid)
        self.ended = False


class _Server:
    def __init__(self, control):
        self.control = control
        self.selector = selectors.DefaultSelector()
        self.selector.register(control, selectors.EVENT_READ, ("control", None))
        self.children = {}

    def loop(self):
        while True:
            for key, _ in self.selector.select():
                kind, child = key.data
                if kind == "control":
                    if not self._take_request():
                        self._shutdown()
                        return
                elif kind == "exit":
                    self._report_exit(child)
                else:
                    self._answer(child)

    def _take_request(self):
        try:
            data, fds, _, _ = socket.recv_fds(self.control, _MAX_REQUEST, _MAX_FDS)
        except OSError:
            return False
        if not data and not fds:
            return False  # the parent closed its end: nothing more will come
        if not fds:
            return True
        conn = socket.socket(fileno=fds[0])
        stage_fds = fds[1:]
        try:
            request = json.loads(data)
            if len(stage_fds) not in (3, 4):
                raise ValueError(f"{len(stage_fds)} descriptors for the stage, not 3 or 4")
        except ValueError as exc:
            _close_all(stage_fds)
            _send(conn, {"error": f"bad request: {exc}"})
            conn.close()
            return True
        sys.stdout.flush()
        sys.stderr.flush()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:
            _become_worker(request, conn, stage_fds, parent)  # never returns
        _close_all(stage_fds)
        child = _Child(pid, conn)
        self.children[pid] = child
        self.selector.register(child.pidfd, selectors.EVENT_READ, ("exit", child))
        self.selector.register(conn, selectors.EVENT_READ, ("conn", child))
        return True

    def _report_exit(self, child):
        self.selector.unregister(child.pidfd)
        os.close(child.pidfd)
        child.ended = True
        try:
            info = os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
        except ChildProcessError:
            info = None
        if info is None:
            _send(child.conn, {"exit": CHILD_SETUP_FAILED})
        elif info.si_code == os.CLD_EXITED:
            _send(child.conn, {"exit": info.si_status})
        else:
            _send(child.conn, {"signal": info.si_status})

    def _answer(self, child):
        """The parent's "reap", or its end closing: the child may go now."""
        try:
            message = child.conn.recv(64)
        except OSError:
            message = b""
        if message and not child.ended:
            return  # nothing else is asked of a running child
        self._forget(child)

    def _forget(self, child):
        if not child.ended:
            _kill_group(child.pid)
            self.selector.unregister(child.pidfd)
            os.close(child.pidfd)
        try:
            os.waitpid(child.pid, 0)
        except ChildProcessError:
            pass
        self.selector.unregister(child.conn)
        child.conn.close()
        del self.children[child.pid]

    def _shutdown(self):
        for child in list(self.children.values()):
            self._forget(child)


def _kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def _send(conn, message):
    try:
        conn.send(json.dumps(message).encode())
    except OSError:
        pass  # the parent is gone; its end closing brings the cleanup


def _close_all(fds):
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def _become_worker(request, conn, stage_fds, parent):
    """In the forked child: set up as a fresh worker would be, run the stage, exit. The child
    itself says its pid, once it leads its own group: a parent that kills the group at once
    must find it."""
    try:
        os.setsid()
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(CHILD_SETUP_FAILED)  # the server died between fork and prctl
        conn.send(json.dumps({"pid": os.getpid()}).encode())
        _place_descriptors(stage_fds)
        import resource
        for which, soft, hard in request.get("limits", []):
            resource.setrlimit(int(which), (int(soft), int(hard)))
        os.chdir(request.get("cwd") or "/")
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in request.get("env", {}).items()})
        random.seed()
        argv = [str(a) for a in request.get("argv", [])]
        sys.argv = [os.path.join(os.path.dirname(os.path.dirname(__file__)), "worker.py")] + argv
    except BaseException:
        _report_setup_failure()
    from .main import main
    code = main(argv, forked=True)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(code)


def _place_descriptors(stage_fds):
    """stdin, stdout, stderr (and the result channel) at 0..3; every other descriptor closed,
    the server's control socket and the other requests' connections among them."""
    high = [os.dup(fd) for fd in stage_fds]
    count = len(high)
    for target, fd in enumerate(high):
        os.dup2(fd, target, inheritable=True)
    keep = set(range(count))
    for fd in _open_descriptors():
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _open_descriptors():
    return [int(name) for name in os.listdir("/proc/self/fd") if name.isdigit()]


def _report_setup_failure():
    try:
        os.write(2, ("crucible fork server: the stage's process could not be set up:\n"
                     + traceback.format_exc()).encode(errors="replace"))
    finally:
        os._exit(CHILD_SETUP_FAILED)
