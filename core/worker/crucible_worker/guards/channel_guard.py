"""The result channel's descriptor: candidate writes, closes and dups aimed at it are refused.
"""
import os
import sys

from .auditor import TAMPERING


class ChannelGuard:
    """Keeps candidate code off the result channel (the pipe the facts go to).

    Writing to it, closing it or duplicating over it through `os`/`posix` (write, writev,
    sendfile, close, closerange, dup2) is refused unless the harness's own code does it;
    opening it as a file object (os.fdopen, io.open, FileIO on its number, or on a duplicate:
    the pipe is recognised by identity, not number) is refused by the auditor. Refusals raise
    PermissionError and are recorded as harness_tampering.

    An in-process guard only raises the bar: the originals stay reachable to code that
    introspects the wrappers, reloads `posix` or uses ctypes (which the auditor records).
    Only a channel the parent authenticates is out of reach. For that reason nothing reachable
    from the wrappers (closures, attributes) refers to the channel object or the stage.
    """

    _WRITERS = ("write", "writev", "sendfile")
    _CLOSERS = ("close", "closerange", "dup2")

    def __init__(self, code_map, auditor):
        self.code_map = code_map
        self.auditor = auditor
        self.fd = None
        self.identity = None
        self.entry_points = {}

    def install(self, fd):
        if fd is None or self.identity is not None:
            return
        st = os.fstat(fd)
        self.fd, self.identity = fd, (st.st_dev, st.st_ino)
        self.auditor.channel = self
        import posix
        for module in (os, posix):
            for name in self._WRITERS + self._CLOSERS:
                original = getattr(module, name, None)
                if original is None or getattr(original, "_crucible_guard", False):
                    continue
                wrapper = self._wrap(name, original)
                setattr(module, name, wrapper)
                self.entry_points[f"{module.__name__}.{name}"] = wrapper

    def is_channel(self, fd):
        if not isinstance(fd, int) or self.identity is None or fd < 0:
            return False
        if fd == self.fd:
            return True
        try:
            st = os.fstat(fd)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == self.identity

    def _touches(self, name, args):
        if not args:
            return False
        if name == "closerange":
            low = args[0] if isinstance(args[0], int) else 0
            high = args[1] if len(args) > 1 and isinstance(args[1], int) else low
            return self.fd is not None and low <= self.fd < high
        if name == "dup2":
            return len(args) > 1 and self.is_channel(args[1])
        return self.is_channel(args[0])

    def _wrap(self, name, original):
        guard = self

        def wrapper(*args, **kwargs):
            if guard._touches(name, args) and \
                    not guard.code_map.written_by_harness(sys._getframe(1)):
                guard.refuse(f"os.{name}", sys._getframe(1))
            return original(*args, **kwargs)

        wrapper.__name__ = wrapper.__qualname__ = name
        wrapper.__doc__ = getattr(original, "__doc__", None)
        wrapper._crucible_guard = True
        return wrapper

    def refuse(self, what, frame):
        line = self.code_map.candidate_line(frame)
        self.auditor.record(what, TAMPERING, "the result channel", line)
        raise PermissionError(f"crucible sandbox: {what} on the result channel is not allowed")


