"""Threads alive before and after forward calls, and every thread start with its candidate line.
"""
import _thread
import functools
import sys
import threading


_MAX_THREAD_ENTRIES = 50


class ThreadWatch:
    """Thread starts (all of them, with the candidate line) and threads alive around forwards.

    `install()` wraps `_thread.start_new_thread` and `threading._start_new_thread` (which
    Thread.start uses): CPython 3.11 raises no audit event for a new thread. Threads started
    from C (torch's own pools) are not Python threads and are not listed.
    """

    def __init__(self, code_map, auditor=None):
        self.code_map = code_map
        self.auditor = auditor
        self.starts = []          # [{"name", "line", "attributed"}]
        self.baseline = None      # threads alive before the first forward
        self.after = None         # threads alive after the last forward
        self.seen = {}            # ident -> Thread, new threads seen alive after a forward
        self._originals = {}
        self.entry_points = {}

    def install(self):
        if self._originals:
            return
        # Python 3.13 starts threads through start_joinable_thread; earlier versions through
        # start_new_thread (threading keeps its own reference to whichever it uses).
        for name in ("start_new_thread", "start_joinable_thread"):
            original = getattr(_thread, name, None)
            if original is None:
                continue
            wrapper = self._wrap(original)
            self._originals["_thread." + name] = original
            setattr(_thread, name, wrapper)
            self.entry_points["_thread." + name] = wrapper
            for alias in ("_start_new_thread", "_start_joinable_thread"):
                if getattr(threading, alias, None) is original:
                    setattr(threading, alias, wrapper)
                    self.entry_points["threading." + alias] = wrapper

    def _wrap(self, original):
        watch = self

        @functools.wraps(original)
        def start(function, *args, **kwargs):
            watch._note_start(sys._getframe(1), function)
            return original(function, *args, **kwargs)

        return start

    def _note_start(self, frame, function):
        try:
            attributed, line = self.code_map.attribute(frame)
            target = getattr(function, "__self__", None)
            thread = target if isinstance(target, threading.Thread) else None
            name = thread.name if thread is not None else getattr(function, "__qualname__", None)
            self.starts.append({"name": str(name), "line": line, "attributed": attributed,
                                "thread": thread})
            if attributed and self.auditor is not None:
                self.auditor.record("_thread.start_new_thread", "concurrency_escape",
                                    str(name), line)
        except Exception:
            pass

    def mark_baseline(self):
        if self.baseline is None:
            self.baseline = {t.ident: t for t in threading.enumerate()}

    def after_forward(self):
        self.after = threading.active_count()
        if self.baseline is None:
            self.mark_baseline()
            return
        for thread in threading.enumerate():
            if thread.ident not in self.baseline:
                self.seen[thread.ident] = thread

    def facts(self):
        """{"before", "after", "started"}: `started` has one entry per (name, line), folding
        the same thread started on every call, with how many were started ("count")."""
        baseline = self.baseline or {}
        threads = []   # (thread or None, name, line)
        recorded = set()
        for record in self.starts:
            thread = record["thread"]
            if thread is not None:
                recorded.add(id(thread))  # torch's or Triton's own threads are not listed
            if record["attributed"]:
                threads.append((thread, record["name"], record["line"]))
        for thread in list(self.seen.values()):
            # alive after a forward, its start not seen: the candidate got round the wrapper
            # (the identity snapshot says how). Dummy threads are C threads that called into
            # Python, not the candidate's.
            if id(thread) not in recorded and not isinstance(thread, threading._DummyThread):
                threads.append((thread, getattr(thread, "_name", "?"), None))
        folded = {}
        for thread, name, line in threads:
            name = str(name)
            entry = folded.get((name, line))
            if entry is None:
                entry = folded[(name, line)] = {"name": name, "alive": False, "daemon": None,
                                                "line": line, "count": 0}
            entry["count"] += 1
            if thread is not None:
                try:  # a Thread subclass's methods are the candidate's code
                    entry["alive"] = entry["alive"] or bool(thread.is_alive())
                    entry["daemon"] = bool(thread.daemon)
                except Exception:
                    entry["alive"] = None
        after = self.after if self.after is not None else threading.active_count()
        return {"before": len(baseline), "after": after,
                "started": list(folded.values())[:_MAX_THREAD_ENTRIES]}


