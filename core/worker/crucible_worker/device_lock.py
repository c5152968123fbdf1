"""One device, shared fairly between the workers of several verifications at once.

`crucible bench --jobs N` (and two Crucible windows) run several reference and candidate stages
side by side. Their compiles and comparisons may overlap, but a timing that overlaps another
worker's kernels measures the contention, not the kernel: two jobs at a time on one GPU make a
kernel read much slower than alone (docs/PERFORMANCE.md has the figures).

So the device is a reader-writer lock across processes, made of two flock(2) files the parent
creates (`PREFIX.gate`, `PREFIX.rw`; core/verify/worker_stage.cpp):

* a stage holds it *shared* while it runs work on the device (trials, the reference's expected
  outputs), so any number of those overlap;
* a stage holds it *exclusive* while it times, so no other worker's device work runs then.

A worker waiting for the exclusive lock first takes the gate, which new shared holders must pass
through: waiting timings are not starved by a stream of trials. Every wait is bounded
(WAIT_LIMIT_S): a stage that cannot get the lock in time (another worker hung holding it, or a
hostile candidate took it through its inherited descriptor) goes on without it and says so in
its facts, so one candidate can delay another's timing but never fail it.
"""
import contextlib
import fcntl
import os
import time

WAIT_LIMIT_S = 120.0
_POLL_S = 0.005
# Bound before any candidate code exists (a candidate may replace time.monotonic or sleep).
_monotonic = time.monotonic
_sleep = time.sleep
_flock = fcntl.flock


class DeviceLock:
    """The lock named by a job's `device_lock` prefix; with none, every section is unlocked."""

    def __init__(self, prefix, wait_limit_s=WAIT_LIMIT_S):
        self.wait_limit_s = wait_limit_s
        self.problem = None  # why the lock is not in use, when it is not
        self._gate = self._rw = None
        if not prefix:
            self.problem = "no lock was given"
            return
        try:
            self._gate = os.open(prefix + ".gate", os.O_RDONLY | os.O_CLOEXEC)
            self._rw = os.open(prefix + ".rw", os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            self.close()
            self.problem = f"cannot open {prefix}.*: {exc.strerror}"

    def close(self):
        for fd in (self._gate, self._rw):
            if fd is not None:
                os.close(fd)
        self._gate = self._rw = None

    @contextlib.contextmanager
    def shared(self, record=None):
        """Device work that may overlap other workers' device work, but not their timing."""
        with self._held(fcntl.LOCK_SH, "shared_wait_s", record):
            yield

    @contextlib.contextmanager
    def exclusive(self, record=None):
        """A timing: no other worker's device work runs meanwhile."""
        with self._held(fcntl.LOCK_EX, "exclusive_wait_s", record):
            yield

    @contextlib.contextmanager
    def _held(self, mode, wait_key, record):
        """Holds the lock in `mode`. `record` (a dict, the stage's `device_lock` fact) adds up
        the seconds waited under `wait_key` and keeps in `state` whether every section held it."""
        started = _monotonic()
        held = self._acquire(mode, started + self.wait_limit_s)
        if record is not None:
            waited = record.get(wait_key, 0.0) + _monotonic() - started
            record[wait_key] = round(waited, 3)
            if not held:
                record["state"] = self.problem or (f"not held: another worker kept the device "
                                                   f"for over {self.wait_limit_s:g} s")
            else:
                record.setdefault("state", "held")
        try:
            yield
        finally:
            if held:
                _flock(self._rw, fcntl.LOCK_UN)

    def _acquire(self, mode, deadline):
        if self._rw is None:
            return False
        if not self._poll(self._gate, fcntl.LOCK_EX, deadline):
            return False
        try:
            return self._poll(self._rw, mode, deadline)
        finally:
            _flock(self._gate, fcntl.LOCK_UN)

    @staticmethod
    def _poll(fd, mode, deadline):
        """flock(fd, mode) without blocking past `deadline` (flock itself has no timeout)."""
        while True:
            try:
                _flock(fd, mode | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if _monotonic() >= deadline:
                    return False
                _sleep(_POLL_S)
