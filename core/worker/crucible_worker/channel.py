"""The result channel: JSON lines on a file descriptor that is not stdout.

The fd is taken over when the worker starts (before any user code is imported) and kept in
this module; user code that prints, even JSON, only reaches the captured stdout.
"""
import json
import os


class Channel:
    def __init__(self, fd):
        self._fd = fd

    def _write(self, message):
        data = (json.dumps(message, allow_nan=False, default=str) + "\n").encode()
        if self._fd is None:
            return
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    def phase(self, name):
        self._write({"type": "phase", "name": name})

    def facts(self, facts):
        self._write({"type": "facts", "facts": _finite(facts)})


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


def open_channel():
    """The channel from CRUCIBLE_RESULT_FD (default 3); a null channel when that fd is closed."""
    fd = int(os.environ.get("CRUCIBLE_RESULT_FD", "3"))
    try:
        os.fstat(fd)
    except OSError:
        return Channel(None)
    return Channel(fd)
