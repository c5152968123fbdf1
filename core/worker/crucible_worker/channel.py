"""The result channel: JSON lines on a file descriptor that is not stdout.

The fd is taken over when the worker starts (before any user code is imported). Every message
is signed with HMAC-SHA256 under a key the parent writes to the worker's stdin and closes; the
key is read before user code runs and kept only in a closure. A candidate that finds the fd and
writes its own "facts" cannot sign them, and the parent reports unsigned lines as tampering.
"""
import hashlib
import hmac
import json
import os
import sys


class Channel:
    def __init__(self, fd, key=None):
        self._fd = fd
        self._sign = _signer(key)

    def _write(self, message):
        if self._fd is None:
            return
        body = json.dumps(message, allow_nan=False, default=str)
        line = json.dumps({"body": body, "mac": self._sign(body)}) + "\n"
        view = memoryview(line.encode())
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    def phase(self, name, **details):
        self._write({"type": "phase", "name": name, **details})

    def turn(self, state, index, **details):
        """"ready" for timing turn `index`, or "done" with it (turns.py)."""
        self._write({"type": "turn", "state": state, "index": index, **details})

    def facts(self, facts):
        self._write({"type": "facts", "facts": _finite(facts)})


def _signer(key):
    def sign(body):
        if key is None:
            return None
        return hmac.new(key, body.encode(), hashlib.sha256).hexdigest()
    return sign


def _finite(value):
    """JSON has no NaN/Infinity: write them as strings so the channel stays valid JSON."""
    if isinstance(value, float):
        if value != value:
            return "nan"
        if value in (float("inf"), float("-inf")):
            return "inf" if value > 0 else "-inf"
        return value
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _read_key():
    """The signing key from stdin's first line, when the parent says it sent one
    (CRUCIBLE_CHANNEL_KEY=stdin). stdin is then closed, so nothing later can read it again;
    where the parent also grants timing turns on it (CRUCIBLE_TURNS=stdin), the rest of the
    stream moves to a descriptor of its own for turns.py."""
    if os.environ.get("CRUCIBLE_CHANNEL_KEY") != "stdin":
        return None
    line = bytearray()
    while not line.endswith(b"\n"):  # byte by byte: what follows the key is not ours to read
        chunk = os.read(0, 1)
        if not chunk:
            break
        line += chunk
    os.environ.pop("CRUCIBLE_CHANNEL_KEY", None)
    if os.environ.pop("CRUCIBLE_TURNS", None) == "stdin":
        from . import turns
        turns.keep_grant_fd(os.dup(0))
    try:
        sys.stdin.close()
        os.close(0)
    except OSError:
        pass
    return bytes(line).strip() or None


def open_channel():
    """The channel from CRUCIBLE_RESULT_FD (default 3); a null channel when that fd is closed."""
    key = _read_key()
    fd = int(os.environ.get("CRUCIBLE_RESULT_FD", "3"))
    try:
        os.fstat(fd)
    except OSError:
        return Channel(None, key)
    return Channel(fd, key)
