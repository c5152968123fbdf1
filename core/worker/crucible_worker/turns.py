"""Timing turns: the reference's timer and the candidate time their rounds one after the other,
never at once, so that whatever load the machine carries falls on both alike.

Before each round a stage says it is ready (a signed "turn" message on the result channel) and
waits for the parent's grant, one byte on a descriptor the parent keeps open for that (stdin
after the channel's key, moved aside by channel.py). After the round it says it is done. The
parent (core/verify/timing_turns.cpp) grants the turns in alternation and pauses the candidate's
processes while the reference times.

Without a grant descriptor (a stage run on its own), or once the parent closed it, every turn is
granted at once; a grant that does not come in time ends the waiting for the rest of the stage.
Either way the stage's facts say how many of its turns were granted, so the parent can tell
rounds timed in turns from rounds that were not.

A kept baseline (docs/WORKER_PROTOCOL.md, "Kept baseline") times one session per candidate on
the same descriptor: `n` opens the next session, and `a` in place of a grant abandons the
session's rounds (its candidate never asked for a turn).
"""
import contextlib
import os
import select
import time

WAIT_LIMIT_S = 600.0
_GRANT = b"g"
_ABANDON = b"a"
_NEXT_SESSION = b"n"
_monotonic = time.monotonic  # bound before any candidate code exists
_GRANT_FD = []


def keep_grant_fd(fd):
    """Called by channel.py with the descriptor the parent writes grants to."""
    os.set_inheritable(fd, False)
    _GRANT_FD[:] = [fd]


def take_grant_fd():
    """The grant descriptor, once: the stage that takes it owns it."""
    fd = _GRANT_FD[0] if _GRANT_FD else None
    _GRANT_FD[:] = []
    return fd


class Abandoned(Exception):
    """The parent abandoned the session before granting its turn."""


def next_session(fd):
    """Blocks until the parent opens the next session (True) or ends the stream (False)."""
    if fd is None:
        return False
    try:
        while True:
            byte = os.read(fd, 1)
            if byte == _NEXT_SESSION:
                return True
            if not byte:
                return False
    except OSError:
        return False


class Turns:
    def __init__(self, channel, fd=None, wait_limit_s=WAIT_LIMIT_S, session=None):
        self._channel = channel
        self._fd = fd
        self._wait_limit_s = wait_limit_s
        # A kept baseline's session number, in its turn messages: the parent answers only the
        # session it opened last.
        self._details = {} if session is None else {"session": session}
        self.asked = 0
        self.granted = 0
        self.waited_s = 0.0
        self.unpaired = None if fd is not None else "no turns were given"

    @classmethod
    def for_stage(cls, channel, job, fd=None, session=None):
        """The stage's turns on `fd`, or on the grant descriptor when none is given."""
        limit = job.get("turn_wait_s")
        limit = float(limit) if isinstance(limit, (int, float)) and limit > 0 else WAIT_LIMIT_S
        return cls(channel, take_grant_fd() if fd is None else fd, limit, session)

    @property
    def open(self):
        """Whether grants can still come on the descriptor."""
        return self._fd is not None

    @contextlib.contextmanager
    def turn(self, index):
        """Waits for turn `index`, then runs the body as that turn; raises Abandoned (the body
        not run, no "done" sent) when the parent abandons the session instead."""
        self.asked += 1
        self._channel.turn("ready", index, **self._details)
        if self._wait():
            self.granted += 1
        try:
            yield
        finally:
            self._channel.turn("done", index, **self._details)

    def _wait(self):
        if self._fd is None:
            return False
        start = _monotonic()
        try:
            while True:
                left = self._wait_limit_s - (_monotonic() - start)
                if left <= 0:
                    self._stop(f"no turn was granted within {self._wait_limit_s:.0f} s")
                    return False
                ready, _, _ = select.select([self._fd], [], [], left)
                if not ready:
                    continue
                byte = os.read(self._fd, 1)
                if byte == _GRANT:
                    return True
                if byte == _ABANDON:
                    raise Abandoned()
                if not byte:
                    self._stop("the parent ended the turns")
                    return False
        except (OSError, ValueError) as exc:
            self._stop(f"the turns failed: {exc}")
            return False
        finally:
            self.waited_s += _monotonic() - start

    def _stop(self, why):
        if self.unpaired is None:
            self.unpaired = why
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
        self._fd = None

    def facts(self):
        return {"asked": self.asked, "granted": self.granted,
                "waited_s": round(self.waited_s, 3), "unpaired": self.unpaired}
