"""The keeper of the timed calls' inputs: a process beside the candidate's that holds the timing
sets and hands each one over only when its call is about to run.

The worker of a candidate stage forks before anything else (no torch, no channel key, no
sandbox yet). The parent becomes this monitor: it reads the timing sets' files, removes them,
and then answers one request per set. The child goes on as the candidate's worker. Until a timed
call asks for its set, that set is nowhere in the candidate's address space, so code that walks
the heap (from `__init__`, or from an earlier call) finds nothing to precompute; and the
candidate's kernel walls (a Landlock domain nested inside the monitor's, seccomp without ptrace
or process_vm_readv) keep it out of the monitor's memory. The monitor ends with its child's exit
status, so the parent process sees one worker as before.
"""
import os
import signal
import socket
import struct

_LENGTH = struct.Struct("<Q")
_INDEX = struct.Struct("<I")
_READY = b"R"
# Each answer starts with this: an answer read in part by someone else leaves the stream out of
# step, and the next header the harness reads does not start with it.
_MAGIC = b"CRUCIBLE"
_ANSWER_WAIT_S = 30  # the monitor answers at once; no answer means someone else took it


def set_path(inputs_dir, index):
    return os.path.join(inputs_dir, f"timing_{index}.ctp")


def start(inputs_dir, count, replay=False):
    """Forks. Returns a Client in the child (the candidate's worker); the parent serves the sets
    and exits with the child's status, never returning. `replay`: the reference's timer's
    monitor, which leaves the files in place and hands out whichever set is asked for, as often
    as asked (each of its timers takes each set in turn, session after session)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:
        ours.close()
        return Client(theirs, count)
    theirs.close()
    _serve(ours, inputs_dir, count, pid, replay)
    raise AssertionError("unreachable")  # _serve exits


def _serve(conn, inputs_dir, count, child, replay=False):
    # Nothing of the stage's channel in this process: the child reads the key and writes facts.
    channel = os.environ.get("CRUCIBLE_RESULT_FD", "3")
    for fd in (0, int(channel) if channel.isdigit() else 3):
        if fd == conn.fileno():
            continue
        try:
            os.close(fd)
        except OSError:
            pass
    sets = []
    for j in range(count):
        path = set_path(inputs_dir, j)
        try:
            with open(path, "rb") as f:
                sets.append(f.read())
            if not replay:
                os.unlink(path)
        except OSError:
            sets.append(b"")
    # The sets go out in order, each once, whoever asks: the socket is reachable from candidate
    # code too, and a set it takes early is then missing when the harness asks, which the
    # harness sees in the index that comes back.
    served = 0
    try:
        conn.sendall(_READY)
        while True:
            asked = _receive(conn, _INDEX.size)
            if asked is None:
                break
            if replay:
                (served,) = _INDEX.unpack(asked)
            data = sets[served] if served < len(sets) else b""
            conn.sendall(_MAGIC + _INDEX.pack(served) + _LENGTH.pack(len(data)) + data)
            if not replay:
                served += 1
    except OSError:
        pass
    conn.close()
    _exit_like(child)


def _exit_like(child):
    """Ends this process the way `child` ended: its exit code, or its signal."""
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except ChildProcessError:
            os._exit(0)
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def _receive(conn, size):
    chunks, left = [], size
    while left:
        chunk = conn.recv(min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class Client:
    """The candidate's side: waits until the monitor holds the sets, then fetches one by one."""

    def __init__(self, conn, count):
        self._conn = conn
        self.count = count
        if _receive(conn, 1) != _READY:
            raise RuntimeError("the input monitor did not start")
        conn.settimeout(_ANSWER_WAIT_S)

    def fetch(self, index):
        """Set `index`, the next in order. HandOverMismatch when the monitor hands out another
        one: something else in this process took a set."""
        self._conn.sendall(_INDEX.pack(index))
        try:
            header = _receive(self._conn, len(_MAGIC) + _INDEX.size + _LENGTH.size)
        except TimeoutError:
            raise HandOverMismatch(f"no answer came for timing set {index}: another reader "
                                   "took it from the input monitor's socket") from None
        if header is None:
            raise RuntimeError("the input monitor is gone")
        if not header.startswith(_MAGIC):
            raise HandOverMismatch(f"the answer for timing set {index} was out of step: another "
                                   "reader took part of the input monitor's answers")
        header = header[len(_MAGIC):]
        (served,) = _INDEX.unpack(header[:_INDEX.size])
        (length,) = _LENGTH.unpack(header[_INDEX.size:])
        data = _receive(self._conn, length) if length else b""
        if data is None:
            raise RuntimeError("the input monitor is gone")
        if served != index:
            raise HandOverMismatch(f"the input monitor handed over timing set {served} when the "
                                   f"harness asked for set {index}: another request took a set")
        return data


class HandOverMismatch(RuntimeError):
    """A timing set was taken by a request the harness did not make."""


_CLIENT = []


def client():
    """The monitor's client in a candidate worker that started one; None otherwise."""
    return _CLIENT[0] if _CLIENT else None


def start_for_job(job, stage="candidate"):
    """Starts the monitor for a candidate job whose inputs are its private copy, or the replaying
    one for a baseline job (timing_sets.py: both timers take their sets the same way)."""
    count = int(job.get("timing_sets", 0) or 0)
    replay = stage == "baseline"
    if count <= 0 or not job.get("inputs_dir") or not (replay or job.get("private_inputs")):
        return None
    _CLIENT.append(start(job["inputs_dir"], count, replay))
    return _CLIENT[0]
