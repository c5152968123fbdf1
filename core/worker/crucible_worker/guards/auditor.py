"""The audit hook: events attributed to the candidate are recorded, and its sandbox violations
and harness tampering are refused.
"""
import os
import sys
import sysconfig
import threading
import torch

from .code_map import _top


SANDBOX, TAMPERING, CONCURRENCY = "sandbox_violation", "harness_tampering", "concurrency_escape"
# how an event is attributed: walking past libraries, the innermost frame only (frame
# introspection), or refused to anything but the harness (writes to its result files)
WALK, DIRECT, HARNESS_ONLY = "walk", "direct", "harness_only"

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
_SYSTEM_READ_DIRS = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc",
                     "/proc", "/sys", "/dev", "/opt", "/run/nvidia", "/var/lib/nvidia")
_PROCESS_EVENTS = frozenset(["subprocess.Popen", "os.system", "os.exec", "os.posix_spawn",
                             "os.spawn", "os.kill", "os.killpg", "signal.pthread_kill",
                             "os.startfile", "pty.spawn", "os.popen"])
_NETWORK_EVENTS = frozenset(["urllib.Request", "http.client.connect", "http.client.send",
                             "ftplib.connect", "ftplib.sendcmd", "smtplib.connect",
                             "smtplib.send", "poplib.connect", "imaplib.open", "nntplib.connect",
                             "telnetlib.Telnet.open", "webbrowser.open"])
_FORK_EVENTS = frozenset(["os.fork", "os.forkpty"])
# filesystem changes: event -> indexes of the path arguments
_FS_EVENTS = {"os.remove": (0,), "os.rmdir": (0,), "shutil.rmtree": (0,), "os.rename": (0, 1),
              "os.link": (0, 1), "os.symlink": (1,), "os.truncate": (0,), "os.mkdir": (0,),
              "os.chmod": (0,), "os.chown": (0,), "os.utime": (0,), "shutil.copyfile": (1,),
              "shutil.copytree": (1,), "shutil.move": (0, 1), "os.chflags": (0,),
              "os.lchmod": (0,), "os.lchown": (0,), "os.setxattr": (0,),
              "os.removexattr": (0,)}
_TAMPERING_WALK = frozenset(["gc.get_objects", "gc.get_referrers", "gc.get_referents",
                             "sys._current_frames", "sys._current_exceptions",
                             "sys.addaudithook"])
_TAMPERING_DIRECT = frozenset(["sys._getframe", "sys.settrace", "sys.setprofile",
                               "code.__new__", "function.__new__"])
_SETATTR_EVENTS = frozenset(["object.__setattr__", "object.__delattr__"])
# Attributes that hand out a frame (and through f_back, which raises no event, every frame
# below it: the harness's included).
_FRAME_ATTRS = frozenset(["tb_frame", "gi_frame", "cr_frame", "ag_frame"])
# Types (and functions) of these packages are the harness's tools; changing them is tampering.
_PROTECTED_TOPS = frozenset(["torch", "triton", "numpy", "time", "builtins", "sys", "gc", "json",
                             "os", "threading", "_thread", "crucible_worker", "statistics",
                             "importlib", "io", "_io", "signal"])

_MAX_RECORDS = 200


def _text(value, limit=200):
    try:
        text = os.fsdecode(value) if isinstance(value, (bytes, os.PathLike)) else str(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit] + "..."


class Auditor:
    """The audit hook (installed once; Python has no way to remove one).

    Records events attributed to the candidate: {"event", "category", "detail", "line"} with
    repeats folded into "count". Candidate sandbox violations (and fork) are also blocked by
    raising PermissionError from the hook, which fails the audited operation.

    Roots: `write_roots` may be written and read, `read_roots` read (the candidate's folder,
    the inputs), and Python's installation and system folders read. Value-pack files (*.ctp)
    are the harness's results: the candidate may not write them anywhere.
    """

    def __init__(self, code_map, write_roots=(), read_roots=()):
        self.code_map = code_map
        self.enabled = True
        self.write_roots = tuple(self._root(p) for p in write_roots if p)
        self.read_roots = tuple(self._root(p) for p in read_roots if p) + self.write_roots
        python_dirs = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
        for key in ("stdlib", "platstdlib", "purelib", "platlib", "include", "scripts", "data"):
            path = sysconfig.get_paths().get(key)
            if path:
                python_dirs.add(path)
        try:
            import site
            python_dirs.update(site.getsitepackages())
            python_dirs.add(site.getusersitepackages())
        except Exception:
            pass
        self.system_roots = tuple(self._root(p) for p in python_dirs if p) + \
            tuple(d + os.sep for d in _SYSTEM_READ_DIRS)
        pid = os.getpid()
        self._fd_tables = (f"/proc/{pid}/fd", f"/proc/{pid}/fdinfo", f"/proc/{pid}/task",
                           "/proc/self/fd", "/dev/fd")
        self.channel = None   # a ChannelGuard, once the channel is guarded
        self.records = []
        self._index = {}
        self.dropped = 0
        self._tls = threading.local()
        self._handlers = {}
        self.installed = False

    @staticmethod
    def _root(path):
        return os.path.realpath(os.fsdecode(path)).rstrip(os.sep) + os.sep

    def install(self):
        if not self.installed:
            sys.addaudithook(self._hook)
            self.installed = True

    # -- recording

    def record(self, event, category, detail, line):
        key = (event, category, detail, line)
        existing = self._index.get(key)
        if existing is not None:
            existing["count"] += 1
            return
        if len(self.records) >= _MAX_RECORDS:
            self.dropped += 1
            return
        entry = {"event": event, "category": category, "detail": detail, "line": line,
                 "count": 1}
        self._index[key] = entry
        self.records.append(entry)

    def facts(self):
        return [dict(r) for r in self.records]

    # -- the hook

    def _hook(self, event, args):
        handler = self._handlers.get(event, False)
        if handler is False:
            handler = self._handler_for(event)
            self._handlers[event] = handler
        if handler is None or not self.enabled:
            return
        tls = self._tls
        if getattr(tls, "busy", False):
            return
        tls.busy = True
        try:
            verdict = handler(event, args)
            if verdict is None:
                return
            category, detail, block, mode = verdict
            frame = sys._getframe(1)
            if mode is HARNESS_ONLY:
                if self.code_map.written_by_harness(frame):
                    return
                line = self.code_map.candidate_line(frame)
            else:
                attributed, line = self.code_map.attribute(frame, direct=mode is DIRECT)
                if not attributed:
                    return
            self.record(event, category, detail, line)
        except Exception:
            return
        finally:
            tls.busy = False
        if block:
            raise PermissionError(f"crucible sandbox: {event} ({detail}) is not allowed")

    def _handler_for(self, event):
        if event == "open":
            return self._on_open
        if event in _FS_EVENTS:
            return self._on_fs
        if event in ("os.listdir", "os.scandir"):
            return self._on_listdir
        if event in _PROCESS_EVENTS or event.startswith("os.exec") \
                or event.startswith("os.posix_spawn") or event.startswith("os.spawn"):
            return self._on_process
        if event.startswith("socket.") or event in _NETWORK_EVENTS:
            return self._on_network
        if event in _FORK_EVENTS:
            return self._on_fork
        if event.startswith("ctypes."):
            return self._on_ctypes
        if event in _TAMPERING_WALK:
            return self._on_tampering_walk
        if event in _TAMPERING_DIRECT:
            return self._on_tampering_direct
        if event in _SETATTR_EVENTS:
            return self._on_setattr
        if event == "object.__getattr__":
            return self._on_getattr
        return None

    # -- handlers: (category, detail, block, direct) or None

    def _on_open(self, event, args):
        path = args[0] if args else None
        if isinstance(path, int):
            if self.channel is not None and self.channel.is_channel(path):
                return TAMPERING, "open the result channel", True, HARNESS_ONLY
            return None
        if path is None:
            return None
        mode = args[1] if len(args) > 1 else None
        flags = args[2] if len(args) > 2 else 0
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
            (isinstance(flags, int) and (flags & _WRITE_FLAGS) != 0)
        target = self._path(path)
        if target is None:
            return None
        if writing:
            if _is_result_file(target):
                return SANDBOX, f"write {target}", True, HARNESS_ONLY
            if self._writable(target):
                return None
            return SANDBOX, f"write {target}", True, WALK
        if self._is_fd_table(target):
            return TAMPERING, f"read {target}", True, WALK
        if self._readable(target):
            return None
        return SANDBOX, f"read {target}", True, WALK

    def _on_fs(self, event, args):
        for index in _FS_EVENTS[event]:
            if index < len(args):
                target = self._path(args[index])
                if target is None:
                    continue
                if _is_result_file(target):
                    return SANDBOX, f"{event} {target}", True, HARNESS_ONLY
                if not self._writable(target):
                    return SANDBOX, f"{event} {target}", True, WALK
        return None

    def _on_listdir(self, event, args):
        # The result channel is a pipe among this process's file descriptors: listing them
        # is how candidate code would find it.
        target = self._path(args[0] if args and args[0] is not None else ".")
        if target is not None and self._is_fd_table(target):
            return TAMPERING, f"{event} {target}", True, WALK
        return None

    def _on_process(self, event, args):
        return SANDBOX, _text(args[:2] if len(args) > 1 else args), True, WALK

    def _on_network(self, event, args):
        return SANDBOX, _text(args[1:3] if event.startswith("socket.") else args[:2]), \
            True, WALK

    def _on_fork(self, event, args):
        return CONCURRENCY, event, True, WALK

    def _on_ctypes(self, event, args):
        return TAMPERING, _text(args[:1]), False, WALK

    def _on_tampering_walk(self, event, args):
        # Blocked, not only recorded: walking the heap or other threads' frames is how a
        # candidate would find the harness's objects (the channel, its key), and on a GPU a full
        # gc.get_objects() walk can outlast the timeout.
        return TAMPERING, event, True, WALK

    def _on_tampering_direct(self, event, args):
        return TAMPERING, event, False, DIRECT

    def _on_getattr(self, event, args):
        if len(args) < 2 or args[1] not in _FRAME_ATTRS:
            return None
        return TAMPERING, f"{type(args[0]).__name__}.{args[1]}", False, DIRECT

    def _on_setattr(self, event, args):
        if len(args) < 2:
            return None
        obj, name = args[0], args[1]
        if name == "__code__":
            return TAMPERING, f"{_qualified(obj)}.__code__", False, WALK
        owner_module = getattr(obj, "__module__", None) if isinstance(obj, type) else None
        if isinstance(owner_module, str) and _top(owner_module) in _PROTECTED_TOPS:
            return TAMPERING, f"{_qualified(obj)}.{name}", False, WALK
        return None

    # -- paths

    def _path(self, path):
        try:
            path = os.fsdecode(path)
        except TypeError:
            return None
        try:
            return os.path.realpath(path)
        except Exception:
            return os.path.abspath(path)

    def judge_path(self, path, writing):
        """None when the candidate may read (or write) `path`, else a description."""
        target = self._path(path)
        if target is None:
            return None
        if writing:
            return None if self._writable(target) else f"write {target}"
        if self._is_fd_table(target) or not self._readable(target):
            return f"read {target}"
        return None

    def _is_fd_table(self, target):
        return target.startswith(self._fd_tables)

    def _writable(self, target):
        if _is_result_file(target):
            return False
        return (target + os.sep).startswith(self.write_roots) if self.write_roots else False

    def _readable(self, target):
        probe = target + os.sep
        return probe.startswith(self.read_roots) or probe.startswith(self.system_roots)


def _is_result_file(path):
    """Value packs (and value_pack's temporary files): the harness's results."""
    base = os.path.basename(path)
    return base.endswith(".ctp") or base.startswith(".ctp-")


def _qualified(obj):
    if isinstance(obj, type):
        module = getattr(obj, "__module__", "")
        if obj is torch.Tensor:
            return "torch.Tensor"
        return f"{module}.{obj.__qualname__}" if module else obj.__qualname__
    module = getattr(obj, "__module__", None)
    name = getattr(obj, "__qualname__", None) or type(obj).__name__
    return f"{module}.{name}" if module else str(name)


