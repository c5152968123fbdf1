"""Where code lives: the classification of a frame's file (candidate, library, harness, standard
library, ...) that every attribution uses.
"""
import os
import sys
import sysconfig
import time

# The worker package: this file is in its guards/ folder.
_WORKER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_stat = os.stat  # bound before any candidate code exists


CANDIDATE, USER, WORKER, TRUSTED, IMPORT, STDLIB, INTROSPECT, LIB, EXEC = (
    "candidate", "user", "worker", "trusted", "import", "stdlib", "introspect", "lib", "exec")

# Standard-library modules whose frame introspection is done for their caller: a candidate
# calling inspect.stack() is the candidate looking at frames, a namedtuple looking up its
# module is not.
_INTROSPECTION_MODULES = ("inspect.py", "traceback.py", "pdb.py", "bdb.py",
                          os.path.join("logging", "__init__.py"))


def _package_dir(name):
    """The folder of an installed package, found without importing it (Triton must not be
    imported before the stage has configured it)."""
    module = sys.modules.get(name)
    path = getattr(module, "__file__", None)
    if path:
        return os.path.dirname(os.path.realpath(path)) + os.sep
    try:
        import importlib.util
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    locations = list(getattr(spec, "submodule_search_locations", None) or [])
    return os.path.realpath(locations[0]) + os.sep if locations else None


def _library_prefixes():
    """The environment's own package folders (site-packages of the interpreter and the venv),
    as real paths ending in a separator."""
    paths = set()
    for key in ("purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            paths.add(path)
    try:
        import site
        paths.update(site.getsitepackages())
        if site.ENABLE_USER_SITE:
            paths.add(site.getusersitepackages())
    except Exception:
        pass
    return tuple(sorted(os.path.realpath(p).rstrip(os.sep) + os.sep for p in paths if p))


class CodeMap:
    """Tells which kind of code a filename (a frame's co_filename) holds; cached per filename."""

    def __init__(self, candidate_path=None):
        self._candidate = set()
        self._cache = {}
        self._torch_files = {}
        self.set_candidate(candidate_path)
        # Code written after this moment is nobody's library, wherever it lies.
        self._since = time.time()
        self._worker = os.path.realpath(_WORKER_DIR) + os.sep
        self._torch = tuple(p for p in (_package_dir("torch"), _package_dir("torchgen"),
                                        _package_dir("functorch")) if p)
        self._trusted = self._torch + tuple(p for p in (_package_dir("triton"),) if p)
        stdlib = set()
        for key in ("stdlib", "platstdlib"):
            path = sysconfig.get_paths().get(key)
            if path:
                stdlib.add(os.path.realpath(path) + os.sep)
        self._stdlib = tuple(sorted(stdlib))
        self._introspection_files = frozenset(os.path.join(d, m) for d in self._stdlib
                                              for m in _INTROSPECTION_MODULES)
        self._libraries = _library_prefixes()

    def set_candidate(self, path):
        if path:
            self._candidate.add(path)
            self._candidate.add(os.path.abspath(path))
            self._candidate.add(os.path.realpath(path))
        self._cache.clear()

    def is_candidate(self, filename):
        return filename in self._candidate

    def kind(self, filename):
        kind = self._cache.get(filename)
        if kind is None:
            kind = self._classify(filename)
            self._cache[filename] = kind
        return kind

    def _classify(self, filename):
        if filename in self._candidate:
            return CANDIDATE
        if filename.startswith("<frozen importlib"):
            return IMPORT
        if filename.startswith("<frozen "):
            return STDLIB
        if filename.startswith("<"):
            # exec'd strings ("<string>", dataclass and namedtuple methods, mpmath's generated
            # functions): they belong to whoever called them, so they are looked through.
            return EXEC
        path = os.path.realpath(filename)
        if path in self._candidate:
            return CANDIDATE
        kind = self._installed_kind(path)
        if kind is not None and not self._installed_before(path):
            # No such file, or one written while the stage ran: code compiled under an
            # installed file's name, or put among the installed files, is not the install's.
            return USER
        return kind or USER

    def _installed_kind(self, path):
        """The kind of a file under the environment's real install prefixes, else None: a
        folder merely named like site-packages (in the scratch, say) holds the candidate's
        code, not a library."""
        if path.startswith(self._worker):
            return WORKER
        if path.startswith(self._trusted):
            return TRUSTED
        if path.startswith(self._libraries):  # first: a venv's site-packages is in platstdlib
            return LIB
        if path.startswith(self._stdlib):
            if path in self._introspection_files:
                return INTROSPECT
            return STDLIB
        return None

    def _installed_before(self, path):
        try:
            return _stat(path).st_mtime <= self._since
        except OSError:
            return False

    def written_by_harness(self, frame):
        """Whether the first frame outside the standard library is the harness's: only the
        harness writes value packs, whoever else asks (torch.save from candidate code too)."""
        while frame is not None:
            kind = self.kind(frame.f_code.co_filename)
            if kind is WORKER:
                return True
            if kind is not STDLIB and kind is not INTROSPECT and kind is not EXEC:
                return False
            frame = frame.f_back
        return False

    def attribute(self, frame, direct=False):
        """(attributed, line): whether the event raised with `frame` innermost is the
        candidate's, and the line of the nearest candidate-file frame.

        `direct` (frame introspection): the standard library's own frame lookups are its own
        business (a namedtuple or a TypeVar finding its module); only candidate code or the
        modules that hand frames out (inspect, traceback, logging.currentframe) acting for it
        count.
        """
        while frame is not None:
            kind = self.kind(frame.f_code.co_filename)
            if kind is CANDIDATE or kind is USER:
                return True, self.candidate_line(frame)
            if kind is TRUSTED or kind is WORKER or kind is IMPORT:
                return False, None
            if direct and kind is STDLIB:
                return False, None
            frame = frame.f_back
        return False, None

    def owner_kind_of_file(self, filename):
        """The kind of code in `filename`, exec'd strings counted as the candidate's."""
        kind = self.kind(filename)
        return USER if kind is EXEC else kind

    def owner_kind(self, frame):
        """The kind of `frame`, exec'd code taking the kind of the code that ran it."""
        while frame is not None:
            kind = self.kind(frame.f_code.co_filename)
            if kind is not EXEC:
                return kind
            frame = frame.f_back
        return USER

    def called_from_user_past_torch(self, frame):
        """Whether the first frame outside torch and the harness is user code: a torch op
        issued inside a launch by a kernel body the interpreter runs (candidate code), not by
        Triton's own argument copies."""
        while frame is not None:
            filename = frame.f_code.co_filename
            kind = self.kind(filename)
            if kind is CANDIDATE or kind is USER:
                return True
            if kind is WORKER or kind is EXEC or (kind is TRUSTED and self._is_torch(filename)):
                frame = frame.f_back
                continue
            return False
        return False

    def _is_torch(self, filename):
        known = self._torch_files.get(filename)
        if known is None:
            known = self._torch_files[filename] = \
                os.path.realpath(filename).startswith(self._torch)
        return known

    def candidate_line(self, frame):
        while frame is not None:
            if frame.f_code.co_filename in self._candidate:
                return frame.f_lineno
            frame = frame.f_back
        return None

    def is_user_frame(self, frame):
        return frame is not None and self.owner_kind(frame) in (CANDIDATE, USER)


def _top(module_name):
    return module_name.partition(".")[0] if isinstance(module_name, str) else None
