"""The device lock between workers (crucible_worker/device_lock.py), with real flock(2) files.

Each DeviceLock opens its own descriptors, and flock treats separate opens as separate owners,
so threads of one process stand in for the workers of several verifications."""
import threading
import time

import pytest

from crucible_worker.device_lock import DeviceLock


@pytest.fixture
def prefix(tmp_path):
    p = str(tmp_path / "cuda")
    for suffix in (".gate", ".rw"):
        open(p + suffix, "w").close()
    return p


class Holder(threading.Thread):
    """Holds `prefix`'s lock in `mode` from when it gets it until `release` is set."""

    def __init__(self, prefix, mode, wait_limit_s=10.0):
        super().__init__(daemon=True)
        self.lock = DeviceLock(prefix, wait_limit_s)
        self.mode = mode
        self.record = {}
        self.got = threading.Event()
        self.release = threading.Event()
        self.got_at = None

    def run(self):
        with getattr(self.lock, self.mode)(self.record):
            self.got_at = time.monotonic()
            self.got.set()
            self.release.wait(10)
        self.lock.close()


def _start(prefix, mode, **kw):
    h = Holder(prefix, mode, **kw)
    h.start()
    return h


def test_shared_holders_overlap(prefix):
    a, b = _start(prefix, "shared"), _start(prefix, "shared")
    assert a.got.wait(2) and b.got.wait(2)
    a.release.set(), b.release.set()
    a.join(), b.join()
    assert a.record["state"] == b.record["state"] == "held"


def test_a_timing_waits_for_device_work_and_excludes_it(prefix):
    work = _start(prefix, "shared")
    assert work.got.wait(2)
    timing = _start(prefix, "exclusive")
    assert not timing.got.wait(0.3)  # the trials still run
    work.release.set()
    assert timing.got.wait(2)
    later = _start(prefix, "shared")
    assert not later.got.wait(0.3)  # nothing runs on the device while it times
    timing.release.set()
    assert later.got.wait(2)
    later.release.set()
    for h in (work, timing, later):
        h.join()
    assert timing.record["state"] == "held"
    assert timing.record["exclusive_wait_s"] >= 0.25


def test_a_waiting_timing_goes_before_device_work_that_comes_after_it(prefix):
    first = _start(prefix, "shared")
    assert first.got.wait(2)
    timing = _start(prefix, "exclusive")
    time.sleep(0.1)  # the timing now waits, holding the gate
    newcomer = _start(prefix, "shared")
    assert not newcomer.got.wait(0.3)  # not let in ahead of the waiting timing
    first.release.set()
    assert timing.got.wait(2)
    timing.release.set()
    assert newcomer.got.wait(2)
    newcomer.release.set()
    for h in (first, timing, newcomer):
        h.join()
    assert timing.got_at < newcomer.got_at


def test_a_wait_is_bounded_and_reported(prefix):
    hog = _start(prefix, "exclusive")  # a worker that keeps the device (hung, or hostile)
    assert hog.got.wait(2)
    lock, record = DeviceLock(prefix, wait_limit_s=0.3), {}
    started = time.monotonic()
    ran = False
    with lock.exclusive(record):
        ran = True
    assert ran and time.monotonic() - started < 2
    assert record["state"].startswith("not held: another worker kept the device")
    assert record["exclusive_wait_s"] >= 0.3
    hog.release.set()
    hog.join()
    # The next section holds it again, but the record keeps that one timing went without.
    with lock.exclusive(record):
        pass
    assert record["state"].startswith("not held")
    lock.close()


def test_no_lock_given_or_missing_files_run_unlocked(tmp_path):
    for given, problem in ((None, "no lock was given"),
                           (str(tmp_path / "absent"), "cannot open")):
        lock, record = DeviceLock(given), {}
        with lock.shared(record), lock.exclusive(record):
            pass
        assert record["state"].startswith(problem), record
        lock.close()
