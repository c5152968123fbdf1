"""The `static` stage: facts about the reference and candidate files from Python's `ast` alone.

Nothing here imports or executes the analysed files: they are read as bytes, decoded and parsed.
The stage reports what it sees (lines of the KernelBench entry points, Triton kernels, their
launch sites, and suspicious constructs as `observations`); the C++ judge decides what they mean.
The facts' shape and the closed vocabulary of observation kinds are in docs/WORKER_PROTOCOL.md.

Precision matters more than recall here: every observation can become a cheat flag, and dynamic
facts from the candidate stage catch most of what a static look misses.
"""
import ast
import base64
import binascii
import codecs
import contextlib
import io
import os
import sys
import textwrap
import tokenize

# Analysis recursion limit. Files are parsed under the interpreter's normal limit (a file Python
# cannot parse that way cannot be imported either); walking a tree that did parse recurses a few
# Python frames per level, so the walk gets more head room.
_ANALYSIS_RECURSION_LIMIT = 20000

# ---------------------------------------------------------------------------------------------
# What the observations look for. Names are fully qualified after import aliases are resolved;
# a pattern matches a name equal to it or a name below it ("threading" matches "threading.Thread").

_THREADING = (
    "threading", "_thread", "multiprocessing", "concurrent.futures", "asyncio",
    "torch.multiprocessing", "torch.cuda.Stream", "torch.cuda.stream", "torch.cuda.streams",
    "torch.cuda.ExternalStream", "torch.cuda.set_stream", "torch.cuda.StreamContext",
    "torch.Stream", "torch.jit.fork", "torch.jit._fork", "os.fork", "os.forkpty",
    "os.register_at_fork",
)
_PROCESS_OR_NETWORK = (
    "subprocess", "socket", "socketserver", "urllib", "urllib3", "requests", "http", "httpx",
    "aiohttp", "ftplib", "smtplib", "telnetlib", "xmlrpc", "pty", "os.system", "os.popen",
    "os.startfile",
)
# os.execv, os.spawnl, os.posix_spawnp, ...
_PROCESS_PREFIXES = ("os.exec", "os.spawn", "os.posix_spawn")
_INTROSPECTION = (
    "gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._getframe",
    "sys._current_frames", "sys.settrace", "sys.setprofile", "sys.addaudithook", "sys.monitoring",
    "sys.modules", "threading.settrace", "threading.setprofile", "inspect.currentframe",
    "inspect.stack", "inspect.trace", "inspect.getouterframes", "inspect.getinnerframes",
    "inspect.getframeinfo", "ctypes", "_ctypes", "cffi", "importlib", "runpy", "builtins.exec",
    "builtins.eval", "builtins.compile", "builtins.__import__",
    # Standard-library helpers that hand back frames or tracebacks of the caller's stack.
    "logging.currentframe", "traceback.walk_stack", "traceback.walk_tb",
    "traceback.extract_stack", "traceback.extract_tb", "traceback.format_stack",
    "traceback.print_stack", "traceback.StackSummary", "faulthandler",
    # The import machinery: where modules come from, and loading them from other places.
    "sys.meta_path", "sys.path_hooks", "sys.path_importer_cache", "site", "pkgutil", "zipimport",
    "imp",
)
# Modules whose private names (`sys._current_exceptions`, `warnings._next_external_frame`) walk
# frames or threads' stacks; honest kernels use none of them.
_PRIVATE_FRAME_NAMESPACES = ("sys", "warnings", "threading", "_thread", "traceback", "logging",
                             "inspect")
# Changing sys.path decides which file a later import loads.
_LIST_MUTATORS = ("insert", "append", "extend", "remove", "pop", "clear", "reverse", "sort",
                  "__setitem__", "__delitem__", "__iadd__")
# Builtins that run or load arbitrary code: they can hide anything from a static look.
_DYNAMIC_CODE_BUILTINS = ("exec", "eval", "compile", "__import__")
# Attributes that walk frames or reach a function's globals, whatever the receiver.
_INTROSPECTION_ATTRS = (
    "f_back", "f_locals", "f_globals", "tb_frame", "gi_frame", "cr_frame", "ag_frame",
    "__globals__", "__code__", "__subclasses__",
)
# Private PyTorch internals that switch off or go around what the harness observes: the C
# extension (dispatch-key guards, mode stacks, the profiler), the op registry and Python
# dispatch, and torch.library and friends, which register or replace op implementations.
_TORCH_INTERNALS = (
    "torch._C", "torch._ops", "torch._dispatch", "torch._python_dispatcher",
    "torch.utils._python_dispatch", "torch.library", "torch._library", "torch._custom_op",
    "torch._custom_ops",
)
# Names that switch the profiler off, wherever torch exposes them (torch.autograd,
# torch.autograd.profiler); also reported on receivers the stage cannot resolve.
_PROFILER_SWITCHES = ("_disable_profiler", "_disable_profiler_legacy", "_set_is_profiler_enabled")
_TORCH_INTERNAL_ATTRS = ("_C", "_DisableTorchDispatch", "_ExcludeDispatchKeyGuard",
                         "_unset_dispatch_mode", "_python_dispatch") + _PROFILER_SWITCHES
# Python implementations attached to an operator overload (torch.ops.aten.add.default.py_impl).
_OP_OVERRIDE_LEAVES = ("py_impl", "py_kernels")

# Modules that turn tensors, storages or arrays into bytes (or back); honest kernels never
# import them, so the import is reported by itself.
_RAW_BYTES_MODULES = ("pickle", "_pickle", "cPickle", "pickletools", "copyreg", "marshal",
                      "shelve", "dill", "cloudpickle", "struct", "_struct", "array")
# The pickling protocol and byte dumps: `x.__reduce_ex__(2)` hands out a tensor's storage,
# `storage.__reduce__()` its bytes.
_RAW_BYTES_ATTRS = ("__reduce__", "__reduce_ex__", "tobytes")
_STORAGE_METHODS = ("untyped_storage", "storage", "_typed_storage")
# Builtins that read every element of what they are given: of a storage, its bytes.
_ITERATING_BUILTINS = ("list", "tuple", "set", "bytes", "bytearray", "memoryview", "iter",
                       "sum", "min", "max", "sorted", "map", "enumerate", "zip", "reversed")
_BYTE_BUILTINS = ("bytes", "bytearray", "memoryview")
# Views of Python memory as tensors or arrays, or of tensors as Python memory: reported wherever
# they are named, as a value too (`View = memoryview`, `type(memoryview(b""))`).
_BYTE_VIEWS = ("memoryview", "torch.frombuffer", "numpy.frombuffer")
_IN_MEMORY_FILES = ("io.BytesIO", "_io.BytesIO")

# Importing these is reported by itself; for other modules only their use is.
_REPORTED_IMPORTS = (("threading", _THREADING), ("process_or_network", _PROCESS_OR_NETWORK),
                     ("introspection", ("ctypes", "_ctypes", "cffi")),
                     ("raw_bytes", _RAW_BYTES_MODULES))
# Functions that fetch a member by name: getattr(owner, name).
_MEMBER_FUNCTIONS = ("getattr", "builtins.getattr", "object.__getattribute__",
                     "inspect.getattr_static")
# Modules whose members fetched by a computed name are judged without the name: the frame and
# import machinery, NumPy, byte modules, torch's private corners (not torch itself: a dtype by
# name is honest).
_COMPUTED_NAME_OWNERS = (
    ("introspection", ("builtins", "sys", "gc", "inspect", "traceback", "logging", "weakref",
                       "ctypes", "_ctypes", "importlib", "faulthandler", "threading", "_thread",
                       "types", "runpy", "site", "pkgutil")),
    ("numpy_compute", ("numpy", "scipy")),
    ("raw_bytes", _RAW_BYTES_MODULES),
    ("torch_internals", _TORCH_INTERNALS + ("torch.utils", "torch.autograd", "torch.overrides",
                                            "torch.ops")),
)
# Modules whose member lists are not for honest kernels to read.
_WATCHED_NAMESPACES = ("torch", "numpy", "scipy") + _COMPUTED_NAME_OWNERS[0][1] \
    + _RAW_BYTES_MODULES
# Member names that, spelled in any string, show what the file reaches for.
_SENSITIVE_NAMES = (
    ("torch_internals", _TORCH_INTERNAL_ATTRS + (
        "_disable_current_modes", "_pop_mode", "_pop_mode_temporarily", "_push_mode",
        "_pop_torch_function_stack", "py_impl")),
    ("introspection", _INTROSPECTION_ATTRS + (
        "_getframe", "currentframe", "_current_frames", "_current_exceptions", "settrace",
        "setprofile", "get_objects", "get_referrers", "get_referents", "walk_stack",
        "extract_stack", "__builtins__", "ctypes", "_ctypes", "faulthandler")),
    ("raw_bytes", _RAW_BYTES_ATTRS + ("frombuffer", "pickle", "_pickle", "cPickle", "marshal",
                                      "copyreg", "shelve", "dill", "cloudpickle")),
)
# Functions that import a module named by a string.
_IMPORT_FUNCTIONS = ("importlib.import_module", "importlib.__import__", "builtins.__import__",
                     "importlib.util.find_spec")

# Modules the harness times and compares with: assigning their attributes is tampering.
_TAMPER_ROOTS = ("time", "torch", "triton", "builtins", "sys", "gc", "numpy", "crucible_worker")
# Configuration namespaces change numerics, not the harness (the candidate runs in its own
# process, so they cannot slow the reference down); tf32 switches are reported as casts.
_CONFIG_NAMESPACES = ("torch.backends", "torch._dynamo.config", "torch._inductor.config")

_NUMPY_ROOTS = ("numpy", "scipy")
# Integer and shape helpers of `math` that honest host code uses for grids and scales.
_MATH_SHAPE_HELPERS = ("ceil", "floor", "prod", "log2", "isqrt", "gcd", "lcm", "sqrt")
# NumPy names that describe dtypes rather than compute.
_NUMPY_METADATA = ("dtype", "iinfo", "finfo", "result_type", "promote_types", "can_cast")
# NumPy scalar constructors: like the shape helpers, harmless on Python numbers.
_NUMPY_SCALARS = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
                  "intp", "bool_")
# Reading tensor data into Python: a scalar for a grid is honest, so these are evidence only.
_HOST_TRANSFER_METHODS = ("tolist", "item")
# A NumPy view of tensor data: NumPy's operators on it compute where the profiler cannot see.
_NUMPY_VIEW_METHODS = ("numpy", "__array__")
# Sizes of a tensor, not its data.
_SIZE_METHODS = ("size", "numel", "nelement", "stride", "dim", "ndimension", "element_size",
                 "data_ptr", "storage_offset", "__len__")
_SIZE_BUILTINS = ("len", "range", "isinstance", "id", "hash", "str", "repr", "type")
# Attributes of a tensor or array that describe it; everything else reached from one is data.
_METADATA_ATTRS = ("shape", "dtype", "device", "ndim", "is_cuda", "layout", "requires_grad",
                   "itemsize", "nbytes", "is_leaf", "names", "is_sparse", "is_quantized")

_LOW_PRECISION_LEAVES = ("float16", "half", "bfloat16", "HalfTensor", "BFloat16Tensor")
_DTYPE_NAMESPACES = ("torch", "torch.cuda", "triton.language", "numpy")
_CAST_METHODS = ("to", "type", "astype")
_CAST_FUNCTIONS = ("triton.language.cast", "torch.set_default_dtype",
                   "torch.set_default_tensor_type")
_DTYPE_KEYWORDS = ("dtype", "out_dtype", "cast_inputs")
_AUTOCAST = ("torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast",
             "torch.cpu.amp.autocast")
_REDUCED_PRECISION_FLAGS = ("allow_tf32", "allow_fp16_reduced_precision_reduction",
                            "allow_bf16_reduced_precision_reduction")

_TENSOR_BASES = ("torch.Tensor", "torch._tensor.Tensor")
_DISPATCH_MODE_LEAVES = ("TorchDispatchMode", "TorchFunctionMode")
_SUBCLASS_HOOKS = ("__torch_function__", "__torch_dispatch__")
_SUBCLASS_FACTORIES = ("_make_subclass", "_make_wrapper_subclass")

_MODULE_BASES = ("torch.nn.Module", "torch.nn.modules.module.Module", "Module")
_MEMO_DECORATORS = ("functools.lru_cache", "functools.cache")
_CACHE_LOOKUP_METHODS = ("get", "setdefault", "pop", "__getitem__", "__setitem__",
                         "__contains__")
_SYS_MODULES_MUTATORS = ("update", "pop", "setdefault", "clear", "__setitem__", "__delitem__")
_IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError", "builtins.ImportError",
                  "builtins.ModuleNotFoundError")

# Conventional aliases, used only when the file does not bind the name itself (a star import
# or a copy-pasted fragment still means the usual module).
_CONVENTIONAL_ALIASES = {"tl": "triton.language", "np": "numpy", "nn": "torch.nn"}
# A reference file named like a well-known module cannot be told apart from that module.
_WELL_KNOWN_MODULES = frozenset(sys.stdlib_module_names) | {"torch", "triton", "numpy", "scipy"}


def _matches(name, patterns):
    return any(name == p or name.startswith(p + ".") for p in patterns)


def _is_harness_name(qualname):
    """A module (or something inside one) that the harness relies on, outside config namespaces."""
    return bool(qualname) and qualname.split(".")[0] in _TAMPER_ROOTS \
        and not _matches(qualname, _CONFIG_NAMESPACES)


def _is_torch_internal(qualname):
    """A name under torch's private internals (_TORCH_INTERNALS), also reached through another
    module that exposes them (`torch.cuda.memory._C`), a profiler switch, a Python kernel
    attached to an op, or a private helper of torch.overrides' mode stack."""
    parts = (qualname or "").split(".")
    if "torch" not in parts:
        return False
    parts = parts[parts.index("torch"):]
    return (_matches(".".join(parts), _TORCH_INTERNALS) or "_C" in parts
            or any(p in _PROFILER_SWITCHES for p in parts)
            or (parts[1:2] == ["ops"] and parts[-1] in _OP_OVERRIDE_LEAVES)
            or (parts[1:2] == ["overrides"] and len(parts) > 2 and parts[2].startswith("_")
                and not parts[2].startswith("__")))


def _is_numpy_name(qualname):
    return bool(qualname) and qualname.split(".")[0] in _NUMPY_ROOTS


def _method(names, call):
    """(receiver, method name) of `recv.name(...)` or `getattr(recv, name)(...)`, the name
    folded (None where the folder cannot compute it); (None, None) for other calls."""
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.value, func.attr
    if isinstance(func, ast.Call) and len(func.args) in (2, 3) and not func.keywords \
            and names.resolve(func.func) in _MEMBER_FUNCTIONS[:2]:
        return func.args[0], names.folder.text(func.args[1])
    return None, None


def _is_numpy_view(names, call, qualname):
    """`x.numpy()`, `getattr(x, "numpy")()`, `x.__array__()`, `torch.Tensor.numpy(x)`: a
    NumPy array over tensor data."""
    if _method(names, call)[1] in _NUMPY_VIEW_METHODS and not call.args:
        return True
    return (qualname or "").startswith("torch.Tensor.") \
        and qualname.rpartition(".")[2] in _NUMPY_VIEW_METHODS


def _sensitive_string_kind(text):
    """The observation kind a string spelling a watched name or dotted path stands for."""
    for kind, names in _SENSITIVE_NAMES:
        if text in names:
            return kind
    if "." not in text:
        return None
    if _is_torch_internal(text):
        return "torch_internals"
    if _matches(text, _INTROSPECTION):
        return "introspection"
    if _matches(text, _RAW_BYTES_MODULES):
        return "raw_bytes"
    return None


def _built_from_literals(names, expr):
    """Whether an expression's value is fixed by the file (string literals run through calls
    on them, comprehension variables, names bound once to such values) though the folder
    cannot compute it: a name built that way is hidden on purpose."""
    if not any(isinstance(n, ast.Constant) and isinstance(n.value, (str, bytes))
               for n in ast.walk(expr)):
        return False
    targets = {t.id for n in ast.walk(expr) if isinstance(n, ast.comprehension)
               for t in ast.walk(n.target) if isinstance(t, ast.Name)}
    callees = {id(n.func) for n in ast.walk(expr) if isinstance(n, ast.Call)}
    for node in ast.walk(expr):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id in targets or node.id in names.folder.bindings:
                continue
            if id(node) in callees or (node.id in names.aliases) \
                    or names.is_builtin(node.id):
                continue  # a function or module the value goes through
            return False
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) \
                and id(node) not in callees and names.resolve(node) is None:
            return False  # an attribute of a runtime value
    return True


# ---------------------------------------------------------------------------------------------
# Reading and parsing


def _syntax_error(message, line=None, column=None):
    # Always integers: the C++ side reads them as numbers; 1 where Python gave no position.
    return {"line": int(line or 1), "column": int(column or 1), "message": str(message)}


def _byte_position(data, index):
    """1-based line and column of a byte offset."""
    line_start = data.rfind(b"\n", 0, index) + 1
    return data.count(b"\n", 0, index) + 1, index - line_start + 1


def _decode(data):
    """The source text, honouring a PEP 263 coding cookie as `import` would; or a syntax error."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # an unknown or contradictory coding cookie
        return None, _syntax_error(exc.msg or exc)
    try:
        return data.decode(encoding), None
    except UnicodeDecodeError as exc:
        line, column = _byte_position(data, exc.start)
        byte = data[exc.start:exc.start + 1].hex()
        name = "UTF-8" if encoding.startswith("utf-8") else encoding
        return None, _syntax_error(f"the file is not valid {name}: byte 0x{byte} at line {line},"
                                   f" column {column} ({exc.reason})", line, column)


def _parse_file(path):
    """(tree, None) for a file that parses, else (None, syntax_error)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        return None, _syntax_error(f"cannot read {path}: {exc.strerror or exc}")
    text, error = _decode(data)
    if error:
        return None, error
    if "\0" in text:  # Python 3.11 raises ValueError without a position for these
        index = text.index("\0")
        line = text.count("\n", 0, index) + 1
        return None, _syntax_error("the file contains a null byte", line,
                                   index - (text.rfind("\n", 0, index) + 1) + 1)
    try:
        return ast.parse(text, filename=path), None
    except SyntaxError as exc:
        return None, _syntax_error(exc.msg, exc.lineno, exc.offset)
    except (RecursionError, MemoryError):
        return None, _syntax_error("the code is nested too deeply for Python to parse")
    except ValueError as exc:
        return None, _syntax_error(str(exc))


@contextlib.contextmanager
def _recursion_head_room():
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, _ANALYSIS_RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def _is_main_guard(stmt):
    """`if __name__ == "__main__":`: its body never runs when the worker imports the file."""
    if not isinstance(stmt, ast.If) or not isinstance(stmt.test, ast.Compare):
        return False
    test = stmt.test
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    mains = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(mains) == 1


def _imported_part(tree):
    """The module without its `__main__` blocks: self-tests there are not part of the import."""
    body = []
    for stmt in tree.body:
        body.extend(stmt.orelse if _is_main_guard(stmt) else [stmt])
    return ast.Module(body=body, type_ignores=[])


def _module_level_statements(body):
    """Statements that run at module level, looking into if/try/with blocks but not defs."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With)):
            yield from _module_level_statements(stmt.body + getattr(stmt, "orelse", []))
        elif isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            nested = stmt.body + stmt.orelse + stmt.finalbody
            for handler in stmt.handlers:
                nested += handler.body
            yield from _module_level_statements(nested)


def _last_definition(body, types, name):
    found = None
    for stmt in _module_level_statements(body):
        if isinstance(stmt, types) and stmt.name == name:
            found = stmt
    return found


def _unparse(node):
    try:
        return ast.unparse(node)
    except Exception:  # a tree too deep to print is still a fact; its text is not needed
        return "<expression>"


# ---------------------------------------------------------------------------------------------
# Name resolution


def _dotted_parts(node):
    """["torch", "cuda", "synchronize"] for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def _chain_root(node):
    while isinstance(node, ast.Attribute):
        node = node.value
    return node if isinstance(node, ast.Name) else None


def _import_target(module, level, name):
    base = "." * level + (module or "")
    if not base:
        return name
    return base + name if base.endswith(".") else f"{base}.{name}"


class _NotFoldable(Exception):
    pass


# What the folder evaluates: string methods and builtins that are pure functions of their
# arguments, and decoders an obfuscated name goes through. Nothing else of the file runs.
_FOLD_METHODS = ("join", "replace", "lower", "upper", "strip", "lstrip", "rstrip", "swapcase",
                 "capitalize", "title", "removeprefix", "removesuffix", "decode", "encode",
                 "fromhex")
_FOLD_BUILTINS = ("chr", "ord", "str", "reversed", "list", "tuple", "sorted", "bytes", "map")
_FOLD_ENCODINGS = ("utf-8", "utf8", "ascii", "latin-1", "latin1", "rot13", "rot_13", "hex",
                   "base64")
_FOLD_DECODERS = {
    "codecs.decode": codecs.decode, "codecs.encode": codecs.encode,
    "base64.b64decode": base64.b64decode, "base64.b32decode": base64.b32decode,
    "base64.b16decode": base64.b16decode, "base64.urlsafe_b64decode": base64.urlsafe_b64decode,
    "binascii.unhexlify": binascii.unhexlify, "bytes.fromhex": bytes.fromhex,
}
_FOLD_LIMIT = 4096  # longest string or sequence folded: names are short
_FOLD_BUDGET = 200000  # nodes folded per file, so hostile nesting cannot stall the stage


def _single_bindings(tree):
    """Names, and `self.` attributes, bound exactly once in the file, to the expression bound
    (flow-insensitive, like _Names); parameters and loop variables are never constants."""
    names, attrs, counts = {}, {}, {}
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            counts[node.arg] = 2
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            counts[node.id] = counts.get(node.id, 0) + 1
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                and isinstance(node.value, ast.Name) and node.value.id == "self":
            counts["self." + node.attr] = counts.get("self." + node.attr, 0) + 1
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target, value in _assignment_pairs(node) or []:
                if isinstance(target, ast.Name):
                    names[target.id] = value
                elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                        and target.value.id == "self":
                    attrs[target.attr] = value
    return ({n: v for n, v in names.items() if counts.get(n) == 1},
            {a: v for a, v in attrs.items() if counts.get("self." + a) == 1})


class _Folder:
    """Evaluates expressions built from literals by pure string operations, as a name hidden
    from a reader is built: `"C_"[::-1]`, `"".join(reversed("kcab_f"))`, `chr(95) + "C"`,
    `codecs.decode("...", "rot13")`, f-strings, and names bound once to such expressions.
    Only literals and the pure functions above are evaluated; the file's code never runs."""

    def __init__(self, names, bindings, attr_bindings):
        self.names, self.bindings, self.attr_bindings = names, bindings, attr_bindings
        self.budget = _FOLD_BUDGET

    def text(self, expr):
        """The string an expression always has, or None."""
        value = self.value(expr)
        return value if isinstance(value, str) else None

    def value(self, expr):
        if self.budget <= 0:
            return None
        try:
            return self._fold(expr, 0, {})
        except (_NotFoldable, ArithmeticError, ValueError, TypeError, LookupError,
                UnicodeError, RecursionError, MemoryError):
            return None
        except Exception:  # a decoder's own error (binascii.Error): not a constant
            return None

    def _fold(self, expr, depth, env):
        self.budget -= 1
        if self.budget <= 0 or depth > 64:
            raise _NotFoldable
        value = self._fold_node(expr, depth + 1, env)
        if isinstance(value, (str, bytes, list, tuple)) and len(value) > _FOLD_LIMIT:
            raise _NotFoldable
        if isinstance(value, int) and abs(value) > 1 << 32:
            raise _NotFoldable
        return value

    def _fold_node(self, expr, depth, env):
        fold = lambda e: self._fold(e, depth, env)  # noqa: E731
        if isinstance(expr, ast.Constant):
            if isinstance(expr.value, (str, bytes, int)) and not isinstance(expr.value, bool):
                return expr.value
            if expr.value is None:
                return None
            raise _NotFoldable
        if isinstance(expr, ast.Name):
            if expr.id in env:
                return env[expr.id]
            if expr.id in self.bindings:
                return fold(self.bindings[expr.id])
            raise _NotFoldable
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) \
                and expr.value.id == "self" and expr.attr in self.attr_bindings:
            return fold(self.attr_bindings[expr.attr])
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Mult, ast.Sub)):
            left, right = fold(expr.left), fold(expr.right)
            if isinstance(expr.op, ast.Mult) and isinstance(left, int) \
                    and isinstance(right, int):
                return left * right
            if isinstance(expr.op, ast.Mult):
                count = right if isinstance(right, int) else left
                if not isinstance(count, int) or count > _FOLD_LIMIT:
                    raise _NotFoldable
                return left * right
            return left + right if isinstance(expr.op, ast.Add) else left - right
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
            return -fold(expr.operand)
        if isinstance(expr, ast.JoinedStr):
            parts = []
            for value in expr.values:
                if isinstance(value, ast.FormattedValue):
                    if value.format_spec is not None or value.conversion not in (-1, 115):
                        raise _NotFoldable
                    value = fold(value.value)
                    if not isinstance(value, (str, int)):
                        raise _NotFoldable
                    parts.append(str(value))
                else:
                    parts.append(fold(value))
            return "".join(parts)
        if isinstance(expr, ast.Subscript):
            sequence = fold(expr.value)
            if not isinstance(sequence, (str, bytes, list, tuple)):
                raise _NotFoldable
            if isinstance(expr.slice, ast.Slice):
                bounds = [fold(b) if b is not None else None
                          for b in (expr.slice.lower, expr.slice.upper, expr.slice.step)]
                return sequence[slice(*bounds)]
            return sequence[fold(expr.slice)]
        if isinstance(expr, (ast.List, ast.Tuple)):
            return [fold(e) for e in expr.elts]
        if isinstance(expr, (ast.GeneratorExp, ast.ListComp)) and len(expr.generators) == 1:
            loop = expr.generators[0]
            if loop.ifs or loop.is_async or not isinstance(loop.target, ast.Name):
                raise _NotFoldable
            return [self._fold(expr.elt, depth, dict(env, **{loop.target.id: item}))
                    for item in self._sequence(fold(loop.iter))]
        if isinstance(expr, ast.Call):
            return self._fold_call(expr, fold)
        raise _NotFoldable

    def _sequence(self, value):
        if not isinstance(value, (str, bytes, list, tuple)):
            raise _NotFoldable
        return list(value)

    def _fold_call(self, call, fold):
        if call.keywords:
            raise _NotFoldable
        func = call.func
        if isinstance(func, ast.Name) and func.id in _FOLD_BUILTINS \
                and self.names.is_builtin(func.id):
            if func.id == "map":
                if len(call.args) != 2 or not isinstance(call.args[0], ast.Name) \
                        or call.args[0].id not in ("chr", "ord", "str"):
                    raise _NotFoldable
                convert = {"chr": chr, "ord": ord, "str": str}[call.args[0].id]
                return [convert(v) for v in self._sequence(fold(call.args[1]))]
            args = [fold(a) for a in call.args]
            if func.id in ("reversed", "list", "tuple", "sorted"):
                items = self._sequence(args[0])
                return items[::-1] if func.id == "reversed" else \
                    sorted(items) if func.id == "sorted" else items
            if func.id == "bytes" and len(args) == 2 and args[1] not in _FOLD_ENCODINGS:
                raise _NotFoldable
            return {"chr": chr, "ord": ord, "str": str, "bytes": bytes}[func.id](*args)
        qualname = self.names.resolve(func)
        if qualname in _FOLD_DECODERS:
            args = [fold(a) for a in call.args]
            if qualname.startswith("codecs.") and (len(args) != 2
                                                   or args[1] not in _FOLD_ENCODINGS):
                raise _NotFoldable
            return _FOLD_DECODERS[qualname](*args)
        if isinstance(func, ast.Attribute) and func.attr in _FOLD_METHODS:
            receiver = fold(func.value)
            if not isinstance(receiver, (str, bytes)):
                raise _NotFoldable
            args = [fold(a) for a in call.args]
            if func.attr in ("decode", "encode") and args and args[0] not in _FOLD_ENCODINGS[:5]:
                raise _NotFoldable
            if func.attr == "join":
                args = [self._sequence(args[0])] if len(args) == 1 else args
            return getattr(receiver, func.attr)(*args)
        raise _NotFoldable


class _Names:
    """Resolves expressions to dotted names through the file's imports.

    Flow-insensitive on purpose: an import anywhere in the file (even inside a function) binds
    its name for the whole file, which is what a reader of a small kernel file assumes too.
    A name the file binds itself and never imports (`requests = []`, a parameter `time`) is a
    local value, never a module.
    """

    def __init__(self, tree):
        self.aliases = {}
        self.local = set()  # names the file binds itself: defs, classes, assignments, parameters
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.aliases[alias.asname] = alias.name
                    else:
                        root = alias.name.split(".")[0]
                        self.aliases[root] = root
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name != "*":
                        self.aliases[alias.asname or alias.name] = _import_target(
                            node.module, node.level, alias.name)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.local.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.local.add(node.id)
            elif isinstance(node, ast.arg):
                self.local.add(node.arg)
        self.folder = _Folder(self, *_single_bindings(tree))
        self._add_assignment_aliases(tree)
        self._add_assignment_aliases(tree)  # a second round for chains: C = torch._C; C._X

    def _add_assignment_aliases(self, tree):
        """`sync = torch.cuda.synchronize`, `dt = tl.float16`: names bound only to a module path.

        A name that is also bound any other way (another value, a loop variable, a parameter)
        is left alone: the file's flow decides which binding a use sees, and guessing wrong
        would invent facts.
        """
        candidates, bindings, ambiguous = {}, {}, set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                bindings[node.id] = bindings.get(node.id, 0) + 1
            elif isinstance(node, ast.arg):
                ambiguous.add(node.arg)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Name):
                parts = _dotted_parts(node.value)
                resolved = self.resolve(node.value) if parts and parts[0] in self.aliases \
                    else self._member_by_folded_name(node.value)
                if resolved:
                    candidates.setdefault(node.targets[0].id, []).append(resolved)
        for name, values in candidates.items():
            if name not in self.aliases and name not in ambiguous \
                    and bindings.get(name) == len(values) and len(set(values)) == 1:
                self.aliases[name] = values[0]

    def _member_by_folded_name(self, expr):
        """`getattr(torch, "C_"[::-1])` as torch._C: a member of a module fetched by a name
        the folder can compute; else None."""
        if not (isinstance(expr, ast.Call) and len(expr.args) in (2, 3) and not expr.keywords
                and isinstance(expr.func, ast.Name) and expr.func.id == "getattr"
                and self.is_builtin("getattr")):
            return None
        root = _chain_root(expr.args[0])
        if root is None or root.id not in self.aliases:
            return None  # only members of what the file imports
        owner, name = self.resolve(expr.args[0]), self.folder.text(expr.args[1])
        return f"{owner}.{name}" if owner and name and name.isidentifier() else None

    def resolve(self, node):
        """The dotted name of a Name/Attribute chain with its root resolved through imports;
        None for other expressions and for chains rooted in a local value (`self.weight`).
        A root neither imported nor bound stays as written (a builtin, a star import)."""
        parts = _dotted_parts(node)
        if parts is None:
            return None
        root = parts[0]
        if root in self.aliases:
            root = self.aliases[root]
        elif root in self.local:
            return None
        elif root in _CONVENTIONAL_ALIASES:
            root = _CONVENTIONAL_ALIASES[root]
        return ".".join([root] + parts[1:])

    def is_builtin(self, name):
        """A bare name that still means the builtin (the file neither imports nor binds it)."""
        return name not in self.aliases and name not in self.local


# ---------------------------------------------------------------------------------------------
# Reference facts


class _NotConstant(Exception):
    pass


_BINARY_OPS = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a ** b,
}
_INT64_BITS = 63


def _constant_value(node, known):
    """The value of a literal number, or of simple arithmetic on literals and known constants."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (bool, int, float)):
            return node.value
        raise _NotConstant
    if isinstance(node, ast.Name) and node.id in known:
        return known[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _constant_value(node.operand, known)
        return -value if isinstance(node.op, ast.USub) else +value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY_OPS:
        left = _constant_value(node.left, known)
        right = _constant_value(node.right, known)
        if isinstance(node.op, ast.Pow) and (abs(right) > 64 or abs(left) > 2 ** 32):
            raise _NotConstant  # keep `10 ** 10 ** 10` from eating the stage
        try:
            return _BINARY_OPS[type(node.op)](left, right)
        except (ArithmeticError, ValueError):
            raise _NotConstant from None
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in ("int", "float") and len(node.args) == 1 and not node.keywords):
        value = _constant_value(node.args[0], known)
        return int(value) if node.func.id == "int" else float(value)
    raise _NotConstant


def _representable(value):
    """Only values the judge can read: finite floats and ints that fit an int64."""
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        return value.bit_length() <= _INT64_BITS
    return isinstance(value, float) and value == value and abs(value) != float("inf")


def _bound_names(stmt):
    """Every name a module-level statement may bind (over-approximated)."""
    names = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _assignment_pairs(stmt):
    """(target, value) pairs of a plain assignment, unpacking `a, b = 1, 2`; else None."""
    if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        return [(stmt.target, stmt.value)]
    if not isinstance(stmt, ast.Assign):
        return None
    pairs = []
    for target in stmt.targets:
        if isinstance(target, ast.Tuple) and isinstance(stmt.value, ast.Tuple):
            if len(target.elts) != len(stmt.value.elts):
                return None
            pairs.extend(zip(target.elts, stmt.value.elts))
        else:
            pairs.append((target, stmt.value))
    return pairs


def _module_constants(body):
    """Module-level `NAME = <number>` bindings, in order; a name rebound otherwise is dropped."""
    known = {}
    for stmt in body:
        pairs = _assignment_pairs(stmt)
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            value = ast.BinOp(left=ast.Name(id=stmt.target.id, ctx=ast.Load()), op=stmt.op,
                              right=stmt.value)
            pairs = [(stmt.target, value)]
        if pairs is None:
            for name in _bound_names(stmt):
                known.pop(name, None)
            continue
        for target, value_node in pairs:
            if not isinstance(target, ast.Name):
                for name in _bound_names(target):
                    known.pop(name, None)
                continue
            try:
                value = _constant_value(value_node, known)
            except (_NotConstant, TypeError, OverflowError, RecursionError):
                value = None
            if value is not None and _representable(value):
                known[target.id] = value
            else:
                known.pop(target.id, None)
    return known


def reference_facts(path):
    facts = {"syntax_error": None, "model_line": None, "get_inputs_line": None,
             "get_init_inputs_line": None, "constants": {}}
    tree, error = _parse_file(path)
    if error:
        facts["syntax_error"] = error
        return facts
    with _recursion_head_room():
        try:
            _analyse_reference(_imported_part(tree).body, facts)
        except RecursionError:
            facts["syntax_error"] = _syntax_error("the code is nested too deeply to analyse")
    return facts


def _analyse_reference(body, facts):
    model = _last_definition(body, ast.ClassDef, "Model")
    facts["model_line"] = model.lineno if model else None
    for key, name in (("get_inputs_line", "get_inputs"),
                      ("get_init_inputs_line", "get_init_inputs")):
        found = _last_definition(body, (ast.FunctionDef, ast.AsyncFunctionDef), name)
        facts[key] = found.lineno if found else None
    facts["constants"] = _module_constants(body)


# ---------------------------------------------------------------------------------------------
# Kernels and launches


def _triton_decorator(qualname):
    """"jit", "autotune" or "heuristics" for Triton's kernel decorators, else None."""
    if not qualname:
        return None
    leaf = qualname.rpartition(".")[2]
    if leaf not in ("jit", "autotune", "heuristics"):
        return None
    # A bare name left unresolved comes from a star import (`from triton import *`).
    if qualname == leaf or qualname.split(".")[0] == "triton":
        return leaf
    return None


def _decorator_kind(names, expr):
    if isinstance(expr, ast.Call):  # @triton.autotune(configs=...), @triton.jit(debug=True)
        expr = expr.func
    return _triton_decorator(names.resolve(expr))


def _is_store_call(names, call):
    """tl.store, tl.atomic_*, descriptor stores (`desc.store(...)`): writes to global memory."""
    if isinstance(call.func, ast.Attribute):
        leaf = call.func.attr
    else:
        leaf = (names.resolve(call.func) or "").rpartition(".")[2]
    return leaf == "store" or leaf.endswith("_store") or leaf.startswith("atomic_")


class _Kernel:
    def __init__(self, name, line, autotuned, function):
        self.name, self.line, self.autotuned, self.function = name, line, autotuned, function
        self.stores = False
        self.callees = set()

    def fact(self):
        return {"name": self.name, "line": self.line, "autotuned": self.autotuned,
                "stores": self.stores}


def _unwrap_kernel_call(names, expr, kinds):
    """`triton.autotune(...)(triton.jit(f))` -> "f", collecting the decorator kinds."""
    while isinstance(expr, ast.Call) and expr.args:
        kind = _decorator_kind(names, expr.func)
        if kind is None:
            return None
        kinds.add(kind)
        expr = expr.args[0]
    return expr.id if isinstance(expr, ast.Name) else None


def _find_kernels(tree, names):
    functions = {}
    kernels = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            functions.setdefault(node.name, node)
            kinds = {_decorator_kind(names, d) for d in node.decorator_list} - {None}
            if kinds:
                kernels.append(_Kernel(node.name, node.lineno, "autotune" in kinds, node))
    # Kernels built by calling the decorators: `add_kernel = triton.jit(_add)`, also stored as
    # an attribute (`self.kernel = triton.jit(_add)`), named by that attribute.
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.value, ast.Call)):
            continue
        target = node.targets[0]
        name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
        kinds = set()
        wrapped = _unwrap_kernel_call(names, node.value, kinds) if name else None
        if wrapped and kinds:
            kernels.append(_Kernel(name, node.lineno, "autotune" in kinds,
                                   functions.get(wrapped)))
    _compute_stores(kernels, names)
    return sorted(kernels, key=lambda k: k.line)


def _compute_stores(kernels, names):
    """A kernel stores if its body does, or if a @triton.jit helper it calls does."""
    by_name = {k.name: k for k in kernels}
    for kernel in kernels:
        if kernel.function is None:
            continue
        for stmt in kernel.function.body:
            for node in ast.walk(stmt):
                if not isinstance(node, ast.Call):
                    continue
                if _is_store_call(names, node):
                    kernel.stores = True
                elif isinstance(node.func, ast.Name) and node.func.id in by_name:
                    kernel.callees.add(node.func.id)
    changed = True
    while changed:
        changed = False
        for kernel in kernels:
            if not kernel.stores and any(by_name[c].stores for c in kernel.callees
                                         if c in by_name and by_name[c] is not kernel):
                kernel.stores = changed = True


def _kernel_aliases(tree, kernel_names):
    """`self.kernel = add_kernel`, `k = add_kernel`: other names a kernel is launched through."""
    aliases = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign) or not isinstance(node.value, (ast.Name,
                                                                           ast.Attribute)):
            continue
        value = node.value.id if isinstance(node.value, ast.Name) else node.value.attr
        if value not in kernel_names:
            continue
        for target in node.targets:
            name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
            if name and name not in kernel_names:
                aliases[name] = value
    return aliases


# ---------------------------------------------------------------------------------------------
# Launch hooks: Python that Triton runs inside a launch, where host compute hides from the
# launch sites a reader (or a profiler's view of forward) looks at

# Calls a hook may make: device queries, dtype facts and allocations, no compute.
_HOOK_HARMLESS_CALLS = (
    "torch.cuda.get_device_properties", "torch.cuda.get_device_capability",
    "torch.cuda.current_device", "torch.cuda.device_count", "torch.cuda.is_available",
    "torch.cuda.get_device_name", "torch.cuda.current_stream", "torch.cuda.synchronize",
    "torch.cuda.Event", "torch.finfo", "torch.iinfo", "torch.is_tensor", "torch.is_floating_point",
    "torch.is_complex", "torch.get_default_dtype", "torch.device", "torch.Size", "torch.empty",
    "torch.empty_like", "torch.empty_strided", "torch.zeros", "torch.zeros_like",
    "torch.cuda.is_bf16_supported", "torch.cuda.get_arch_list", "torch.version",
    "torch.promote_types", "torch.result_type", "torch.can_cast", "numpy.dtype", "numpy.iinfo",
    "numpy.finfo",
)
# Methods a hook may call on a kernel argument: sizes, strides and pointers; and those of the
# dicts, lists and configs hooks also get, which tensors do not have.
_HOOK_HARMLESS_METHODS = (
    "numel", "nelement", "stride", "size", "dim", "ndimension", "element_size", "data_ptr",
    "is_contiguous", "get_device", "is_floating_point", "is_complex", "storage_offset", "item",
    "bit_length", "get", "items", "keys", "values", "append", "all_kwargs",
)
# A pre-hook that resets an output (for atomics) writes a constant, which is not compute.
_RESET_METHODS = ("zero_", "fill_")
_RESET_CONSTANTS = ("math.inf", "math.nan", "numpy.inf", "numpy.nan", "torch.inf", "torch.nan")
_EXTRACTING_METHODS = _HOST_TRANSFER_METHODS + _NUMPY_VIEW_METHODS
# Attributes whose assignment writes a tensor's data.
_TENSOR_DATA_ATTRS = ("data", "grad", "real", "imag")


def _is_triton_config(qualname):
    """triton.Config (also as triton.runtime.Config), or a bare Config from a star import."""
    return bool(qualname) and qualname.rpartition(".")[2] == "Config" and (
        qualname == "Config" or qualname.split(".")[0] == "triton")


def _argument(call, index, keyword):
    """A call's argument by keyword, else by position (index None: keyword only); None for an
    absent argument or a literal None."""
    value = next((k.value for k in call.keywords if k.arg == keyword), None)
    if value is None and index is not None and len(call.args) > index:
        value = call.args[index]
    return None if value is None or _is_constant(value, None) else value


def _module_values(tree):
    """Module-level names bound exactly once, to the expression they are bound to (`a, b = 1,
    2` pairs up); a name bound any other way is left out."""
    values, counts = {}, {}
    for stmt in _module_level_statements(tree.body):
        pairs = _assignment_pairs(stmt) or []
        for target, value in pairs:
            if isinstance(target, ast.Name):
                values[target.id] = value
        for name in _statement_names(stmt):
            counts[name] = counts.get(name, 0) + 1
    return {name: value for name, value in values.items() if counts.get(name) == 1}


def _dict_items(expr, module_values):
    """(key text, value) pairs of a dict display or dict(...) call, also through a module-level
    name bound to one."""
    if isinstance(expr, ast.Name) and expr.id in module_values:
        expr = module_values[expr.id]
    if isinstance(expr, ast.Dict):
        return [(k.value if isinstance(k, ast.Constant) and isinstance(k.value, str)
                 else _unparse(k) if k is not None else "**", v)
                for k, v in zip(expr.keys, expr.values)]
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "dict":
        return [(k.arg, k.value) for k in expr.keywords if k.arg]
    return []


def _launch_hook_sites(tree, names):
    """(expression, how it gets the kernel's arguments, what it is) for every function the file
    hands Triton to call during a launch. "dict": a dict of the arguments (heuristics values,
    pre and post hooks, launch_metadata's last parameter); "prune": configs, then such a dict
    (early_config_prune); "direct": the arguments as parameters (perf_model, pre-run hooks,
    do_bench)."""
    module_values = _module_values(tree)
    sites = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Attribute) and node.func.attr == "add_pre_run_hook":
            sites += [(arg, "direct", "pre-run hook") for arg in node.args[:1]]
            continue
        qualname = names.resolve(node.func)
        kind = _triton_decorator(qualname)
        if kind == "heuristics":
            values = _argument(node, 0, "values")
            for key, value in _dict_items(values, module_values):
                sites.append((value, "dict", f"triton.heuristics value for {key}"))
            sites += _opaque_hooks(values, module_values, "dict", "triton.heuristics values")
        elif kind == "autotune":
            for keyword, index, how in (("pre_hook", 5, "dict"), ("post_hook", 6, "dict"),
                                        ("do_bench", None, "direct")):
                value = _argument(node, index, keyword)
                if value is not None:
                    sites.append((value, how, f"triton.autotune {keyword}"))
            prune = _argument(node, 2, "prune_configs_by")
            for key, value in _dict_items(prune, module_values):
                if key in ("early_config_prune", "perf_model"):
                    how = "prune" if key == "early_config_prune" else "direct"
                    sites.append((value, how, f"triton.autotune {key}"))
            sites += _opaque_hooks(prune, module_values, "direct",
                                   "triton.autotune prune_configs_by")
        elif _is_triton_config(qualname):
            value = _argument(node, 5, "pre_hook")
            if value is not None:
                sites.append((value, "dict", "triton.Config pre_hook"))
        if kind == "jit":  # launch_metadata(grid, kernel, args): runs when launches are hooked
            value = _argument(node, None, "launch_metadata")
            if value is not None:
                sites.append((value, "dict", "triton.jit launch_metadata"))
    return sites


def _opaque_hooks(expr, module_values, how, what):
    """For hooks handed over in something other than a plain dict (a dict subclass can keep
    the function a wrapper tries to replace): the container itself, reported as such, and
    every function named or written inside it, checked as a hook."""
    if expr is None or _dict_items(expr, module_values):
        return []
    inside = [n for n in ast.walk(expr) if isinstance(n, ast.Lambda)
              or (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))]
    return [(expr, "opaque", what)] + [(n, how, what) for n in inside]


def _named_functions(tree, kernel_ids):
    """Host functions by name, at any depth: defs, and lambdas bound to a name."""
    functions = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and id(node) not in kernel_ids:
            functions.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
            for target in _flatten_targets(node.targets):
                if isinstance(target, ast.Name):
                    functions.setdefault(target.id, []).append(node.value)
    return functions


def _is_reset_value(names, expr):
    """A constant an output is reset to: a number, +-inf or nan."""
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        return _is_reset_value(names, expr.operand)
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, (bool, int, float))
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) \
            and expr.func.id == "float" and len(expr.args) == 1:
        return isinstance(expr.args[0], ast.Constant) and isinstance(expr.args[0].value, str)
    return names.resolve(expr) in _RESET_CONSTANTS


class _HookScope:
    """Which expressions of a hook hold a kernel argument or part of one: its direct
    parameters, items of its dict parameters, what is reached from those (slices, `.T`, method
    results) and local names bound to any of them. `args["n"]` may be an int: it counts, but
    ints have no methods a hook calls besides harmless ones."""

    def __init__(self, names, direct, dicts, body):
        self.names = names
        self.direct, self.dicts, self.bound = set(direct), set(dicts), set()
        for _ in range(2):  # a name bound from a name bound further down
            for stmt in body:
                for node in ast.walk(stmt):
                    if isinstance(node, ast.Assign) and self.holds_argument(node.value):
                        self.bound.update(t.id for t in _flatten_targets(node.targets)
                                          if isinstance(t, ast.Name))

    def holds_argument(self, expr):
        if isinstance(expr, ast.Name):
            return expr.id in self.direct or expr.id in self.bound
        if isinstance(expr, ast.Subscript):
            return (isinstance(expr.value, ast.Name) and expr.value.id in self.dicts) \
                or self.holds_argument(expr.value)
        if isinstance(expr, ast.Attribute):
            return expr.attr not in _METADATA_ATTRS and self.holds_argument(expr.value)
        receiver, method = _method(self.names, expr) if isinstance(expr, ast.Call) \
            else (None, None)
        return receiver is not None and method not in _HOOK_HARMLESS_METHODS \
            and self.holds_argument(receiver)


class _LaunchHookCheck:
    """Looks through launch hooks, and the host functions they call (one level), for compute on
    tensors or arrays and for writes into tensors."""

    def __init__(self, names, functions):
        self.names, self.functions = names, functions
        self.observations = []
        self._checked = set()

    def check_site(self, expr, how, what, resets):
        if how == "opaque":
            self._report(expr, what, "are not a plain dict: what Triton will call cannot be "
                                     "read")
            return
        qualname = self.names.resolve(expr)
        if qualname and qualname.split(".")[0] in ("torch",) + _NUMPY_ROOTS \
                and not _matches(qualname, _HOOK_HARMLESS_CALLS):
            self._report(expr, what, f"is {qualname} itself")
        for function in self._functions_of(expr):
            self.check(function, how, what, resets)

    def _functions_of(self, expr):
        if isinstance(expr, ast.Lambda):
            return [expr]
        if isinstance(expr, ast.Name):
            return self.functions.get(expr.id, [])
        if isinstance(expr, ast.Attribute) and self.names.resolve(expr) is None:
            return self.functions.get(expr.attr, [])  # self._hook: a method of this file
        if isinstance(expr, ast.Call):
            if self.names.resolve(expr.func) == "functools.partial" and expr.args:
                return self._functions_of(expr.args[0])
            return self._functions_of(expr.func)  # a factory: the hook it returns is inside
        return []

    def check(self, function, how, what, resets, via=None):
        key = (id(function), how, what, resets, via)
        if key in self._checked:
            return
        self._checked.add(key)
        params = [a.arg for node in ast.walk(function) if isinstance(node, ast.arguments)
                  for a in node.posonlyargs + node.args + node.kwonlyargs
                  + [x for x in (node.vararg, node.kwarg) if x is not None]
                  if a.arg not in ("self", "cls")]
        positional = _parameter_names(function.args)
        if how == "direct":
            direct, dicts = params, ()
        elif how == "prune":  # early_config_prune(configs, named_args, **kwargs)
            direct, dicts = (), [p for p in params if not positional or p != positional[0]]
        else:
            direct, dicts = (), params
        body = [function.body] if isinstance(function, ast.Lambda) else function.body
        scope = _HookScope(self.names, direct, dicts, body)
        where = f"{what} (in {via})" if via else what
        for stmt in body:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Call):
                    self._check_call(node, scope, what, where, resets, via, function)
                elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                    self._check_store(node, scope, where, resets)
                elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
                    self._report(node, where, "multiplies matrices with @")

    def _check_call(self, node, scope, what, where, resets, via, function):
        if any(k.arg == "out" for k in node.keywords):
            self._report(node, where, f"writes into a tensor with out= ({_unparse(node.func)})")
        func = node.func
        qualname = self.names.resolve(func)
        root = (qualname or "").split(".")[0]
        if root in ("torch",) + _NUMPY_ROOTS and not _matches(qualname, _HOOK_HARMLESS_CALLS):
            self._report(node, where, f"calls {qualname}()")
        elif root == "math" and any(_extracts_data(self.names, a) for a in node.args):
            self._report(node, where, f"calls {qualname}() on tensor data")
        elif _method(self.names, node)[0] is not None and qualname is None:
            receiver, method = _method(self.names, node)
            if method is None:
                if scope.holds_argument(receiver):
                    self._report(node, where, "calls a method fetched by a computed name on a "
                                              "kernel argument")
                return
            if method in _RESET_METHODS and resets and (
                    (method == "zero_" and not node.args)
                    or (method == "fill_" and len(node.args) == 1
                        and _is_reset_value(self.names, node.args[0]))):
                return
            if method.endswith("_") and not method.startswith("_"):
                self._report(node, where, f"writes into a tensor with .{method}()")
            elif method not in _HOOK_HARMLESS_METHODS and scope.holds_argument(receiver):
                self._report(node, where, f"calls .{method}() on a kernel argument")
        elif isinstance(func, ast.Name) and via is None and func.id in self.functions:
            for callee in self.functions[func.id]:
                if callee is not function:
                    self.check(callee, "direct", what, resets, via=func.id)

    def _check_store(self, node, scope, where, resets):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in _flatten_targets(targets):
            if isinstance(node, ast.AugAssign) and scope.holds_argument(target):
                self._report(node, where, "writes into a tensor with an in-place operator on "
                                          f"{_unparse(target)}")
            elif isinstance(target, ast.Subscript) and scope.holds_argument(target.value):
                if not (resets and isinstance(node, ast.Assign)
                        and _is_reset_value(self.names, node.value)):
                    self._report(node, where, f"writes into a tensor with {_unparse(target)} =")
            elif isinstance(target, ast.Attribute) and target.attr in _TENSOR_DATA_ATTRS \
                    and scope.holds_argument(target.value):
                # Other attributes are the argument's settings (a TensorDescriptor's
                # block_shape, set by the tutorials' pre-hooks).
                self._report(node, where, f"sets {_unparse(target)} of a kernel argument")

    def _report(self, node, where, what):
        self.observations.append({"kind": "launch_hook_compute",
                                  "line": getattr(node, "lineno", 1),
                                  "detail": f"{where} {what}"})


def _extracts_data(names, expr):
    """Whether an expression reads tensor data into Python (`.item()`, `.tolist()`, a NumPy
    view): math compute on it is compute on the tensor."""
    return any(isinstance(n, ast.Call) and _method(names, n)[1] in _EXTRACTING_METHODS
               for n in ast.walk(expr))


def _launch_hook_observations(tree, names, kernels):
    kernel_ids = {id(k.function) for k in kernels if k.function is not None}
    checker = _LaunchHookCheck(names, _named_functions(tree, kernel_ids))
    for expr, how, what in _launch_hook_sites(tree, names):
        resets = what.endswith("pre_hook") or what == "pre-run hook"
        checker.check_site(expr, how, what, resets)
    return checker.observations


# ---------------------------------------------------------------------------------------------
# Observations


def _only_reraises(handler):
    """A handler that always ends by raising: it cannot turn a failure into a fallback."""
    if not handler.body or not isinstance(handler.body[-1], ast.Raise):
        return False
    return not any(isinstance(n, (ast.Return, ast.Break, ast.Continue))
                   for stmt in handler.body for n in ast.walk(stmt))


def _is_trivial_statement(stmt):
    """Statements an import guard may hold besides imports: `HAS_X = True`, `pass`, a docstring."""
    if isinstance(stmt, ast.Pass):
        return True
    if isinstance(stmt, ast.Expr):
        return isinstance(stmt.value, ast.Constant)
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        return isinstance(stmt.value, (ast.Constant, ast.Name, ast.Attribute))
    return False


def _only_imports(body):
    return (any(isinstance(s, (ast.Import, ast.ImportFrom)) for s in body)
            and all(isinstance(s, (ast.Import, ast.ImportFrom)) or _is_trivial_statement(s)
                    for s in body))


def _catches_only_import_errors(names, handler):
    if handler.type is None:
        return False
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return all(names.resolve(t) in _IMPORT_ERRORS for t in types)


def _is_low_precision_dtype(names, expr):
    qualname = names.resolve(expr)
    if not qualname or "." not in qualname:
        return False
    namespace, _, leaf = qualname.rpartition(".")
    return namespace in _DTYPE_NAMESPACES and (
        leaf in _LOW_PRECISION_LEAVES or leaf.startswith(("float8", "float4")))


def _is_constant(expr, *values):
    return isinstance(expr, ast.Constant) and any(
        expr.value is v if isinstance(v, bool) else expr.value == v for v in values)


def _is_whole_shape(expr):
    """`x.shape`, `x.size()`, `tuple(x.shape)`: a whole shape, not one of its sizes."""
    if isinstance(expr, ast.Attribute):
        return expr.attr == "shape"
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        return expr.func.attr == "size" and not expr.args
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and len(expr.args) == 1:
        return expr.func.id in ("tuple", "str", "list") and _is_whole_shape(expr.args[0])
    return False


def _cache_key_kind(key, params=frozenset(), local_keys=None):
    """What identifies a cache entry: id(...), a data pointer, a shape, or an input itself
    (`params`: the names an input may have where the key is used; `local_keys`: local names
    already bound to such a key, as in `key = x.data_ptr()`). None for other keys."""
    if isinstance(key, ast.Name) and key.id in params:
        return f"the input {key.id}"
    if any(isinstance(node, ast.Slice) for node in ast.walk(key)):
        return None  # `self.buffer[:x.shape[0]]` slices a stored tensor, it looks nothing up
    for node in ast.walk(key):
        if isinstance(node, ast.Name) and local_keys and node.id in local_keys:
            return local_keys[node.id]
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id == "id":
                return "id(...)"
            if isinstance(node.func, ast.Attribute) and node.func.attr == "data_ptr":
                return ".data_ptr()"
    parts = key.elts if isinstance(key, ast.Tuple) else [key]
    return ".shape" if any(_is_whole_shape(p) for p in parts) else None


class _Frame:
    """A scope the visitor is in: a class body, a function, or a Triton kernel. A function's
    local names bound to NumPy arrays, to tensor data read into Python, or to storages are
    filled in when the visitor enters it."""

    def __init__(self, kind, name, params=(), local_keys=None, node=None):
        self.kind, self.name, self.params = kind, name, frozenset(params)
        self.local_keys = local_keys or {}
        self.node = node
        self.arrays, self.data, self.storages = set(), set(), set()


# ---------------------------------------------------------------------------------------------
# What ModelNew reaches

# With these the file can reach a function by a computed name, so every function counts.
_DYNAMIC_LOOKUP_BUILTINS = ("globals", "vars", "locals", "eval", "exec", "compile",
                            "__import__")
_DYNAMIC_LOOKUP_NAMES = ("sys.modules", "importlib", "runpy", "inspect", "gc", "builtins")


def _statement_names(stmt):
    """Names a module-level statement binds, without looking into function or class bodies."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names}
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
        targets = [stmt.target]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        targets = [item.optional_vars for item in stmt.items if item.optional_vars]
    else:
        targets = []
    return {t.id for t in _flatten_targets(targets) if isinstance(t, ast.Name)}


def _statement_parts(stmt):
    """What of a module-level statement runs as part of it: a compound statement's header (its
    body's statements come separately from _module_level_statements), else the statement."""
    if isinstance(stmt, (ast.If, ast.While)):
        return [stmt.test]
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.target, stmt.iter]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return list(stmt.items)
    if isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
        return [h.type for h in stmt.handlers if h.type is not None]
    return [stmt]


def _looks_up_names_dynamically(tree, names):
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if node.id in _DYNAMIC_LOOKUP_BUILTINS and names.is_builtin(node.id):
                return True
            if _matches(names.resolve(node) or "", _DYNAMIC_LOOKUP_NAMES):
                return True
        elif isinstance(node, ast.Attribute) and node.attr == "modules" \
                and names.resolve(node) == "sys.modules":
            return True
    return False


def _model_new_reach(tree, model_new, names):
    """ids of the functions and lambdas that ModelNew can run: its methods, the functions and
    classes they name, what those name, and so on. Module-level code counts as reached (it runs
    at import and may file functions away: `HOOKS.append(f)`), and so do functions and classes
    with decorators other than Triton's. None where every function must count: there is no
    ModelNew, or the file looks names up by computed strings."""
    if model_new is None or _looks_up_names_dynamically(tree, names):
        return None
    owners, pending = {}, [model_new]
    for stmt in _module_level_statements(tree.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            owners.setdefault(stmt.name, []).append(stmt)
            if any(_decorator_kind(names, d) is None for d in stmt.decorator_list):
                pending.append(stmt)
        else:
            pending.extend(_statement_parts(stmt))
    seen, reached = set(), set()
    while pending:
        node = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for part in _statement_parts(node) if isinstance(node, ast.stmt) else [node]:
            for sub in ast.walk(part):
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    reached.add(id(sub))
                elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                    pending.extend(o for o in owners.get(sub.id, ()) if id(o) not in seen)
    return reached


def _local_cache_keys(body):
    """Local names bound to something that identifies an input: `key = (id(x), x.shape)`."""
    keys = {}
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Name):
                kind = _cache_key_kind(node.value, local_keys=keys)
                if kind:
                    keys[node.targets[0].id] = kind
    return keys


def _own_nodes(body):
    """The nodes of a body of statements (or an expression), without those of the functions,
    lambdas and classes defined in it."""
    pending = list(body)[::-1]
    while pending:
        node = pending.pop()
        yield node
        pending.extend(child for child in reversed(list(ast.iter_child_nodes(node)))
                       if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                 ast.Lambda, ast.ClassDef)))


def _parameter_names(args):
    every = args.posonlyargs + args.args + args.kwonlyargs
    every += [a for a in (args.vararg, args.kwarg) if a is not None]
    return [a.arg for a in every if a.arg not in ("self", "cls")]


class _CandidateVisitor(ast.NodeVisitor):
    """Walks the candidate once, collecting launch sites and observations.

    "Reachable from ModelNew" is approximated as: any function or class body that is not a
    Triton kernel (kernels cannot hold Python fallbacks, caches or host calls anyway).
    """

    def __init__(self, names, kernels, kernel_aliases, model_new, reference_stem,
                 module_globals, reach=None, depth=0):
        self.names = names
        self.depth = depth  # how deep in code held in strings this file is
        self.reach = reach  # ids of the functions ModelNew reaches; None: all of them
        self.kernels = {k.name for k in kernels}
        self.kernel_function_ids = {id(k.function) for k in kernels if k.function is not None}
        self.kernel_aliases = kernel_aliases
        self.model_new = model_new
        self.reference_stem = reference_stem
        self.module_globals = module_globals
        self.local_classes = {}
        self.compensated_dots = set()  # ids of tl.dot calls of a written-out tf32x3
        self.frames = []
        self.observations = []
        self.launches = []
        self._judged = set()  # ids of chain nodes already judged as part of a longer name
        # Bound anywhere in the file (flow-insensitive, like _Names): module-level names and
        # `self.` attributes holding NumPy arrays, and names and attributes holding in-memory
        # files.
        self.array_globals, self.array_attrs, self.in_memory_files = set(), set(), set()
        # _is_array by node id, for the current frame and bindings: a chain of calls asks
        # about each of its links.
        self._array_memo = {}
        self._bound_values = {}  # id(function node) -> its frame's arrays, data, storages

    # -- bookkeeping ---------------------------------------------------------------------------

    def observe(self, kind, node, detail):
        self.observations.append({"kind": kind, "line": getattr(node, "lineno", 1),
                                  "detail": detail})

    def _in_kernel(self):
        return any(f.kind == "kernel" for f in self.frames)

    def _in_host_function(self):
        return not self._in_kernel() and any(f.kind == "function" for f in self.frames)

    def _in_reached_host_code(self):
        """In a host function that ModelNew can run (see _model_new_reach)."""
        return self._in_host_function() and (self.reach is None or any(
            f.node is not None and id(f.node) in self.reach for f in self.frames))

    def _in_model_new(self):
        return bool(self.frames) and self.frames[0].kind == "class" \
            and self.frames[0].name == "ModelNew"

    def _where(self):
        return ".".join(f.name for f in self.frames) if self.frames else "module level"

    def _function_frame(self):
        for frame in reversed(self.frames):
            if frame.kind != "class":
                return frame
        return _Frame("module", "")

    def _params(self):
        return self._function_frame().params

    def _with_frame(self, frame, nodes):
        self.frames.append(frame)
        self._array_memo.clear()
        try:
            if frame.kind == "function":
                bound = self._bound_values.get(id(frame.node))
                if bound:  # filled in before the walk (_bind_file_values)
                    frame.arrays, frame.data, frame.storages = bound
                else:
                    self._bind_local_values(frame, nodes)
            for node in nodes:
                self.visit(node)
        finally:
            self.frames.pop()
            self._array_memo.clear()

    def _bind_local_values(self, frame, body):
        """Fill in a function's names bound to storages, NumPy arrays or tensor data read into
        Python (assigned, or looped over such data), and note the `self.` attributes and names
        it binds to arrays or in-memory files. Functions defined inside get their own frames
        and see these through _bound_to."""
        for _ in range(2):  # a name bound from a name bound further down
            for node in _own_nodes(body):
                if isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) \
                        and node.value is not None:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    self._bind_value(frame, list(_flatten_targets(targets)), node.value)
                elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)) \
                        and self._iterates_data(node.iter):
                    frame.data.update(t.id for t in _flatten_targets([node.target])
                                      if isinstance(t, ast.Name))

    def _bound_to(self, name, values):
        """Whether the current function, or one it is defined in, binds `name` in its set
        `values` ("arrays", "data" or "storages")."""
        frames = [f for f in self.frames if f.kind == "function"] or [self._function_frame()]
        return any(name in getattr(f, values) for f in frames)

    def _bind_value(self, frame, targets, value):
        local = {t.id for t in targets if isinstance(t, ast.Name)}
        attrs = {t.attr for t in targets if isinstance(t, ast.Attribute)
                 and isinstance(t.value, ast.Name) and t.value.id == "self"}
        self._array_memo.clear()  # what is an array may change with this binding
        if self._is_storage(value):
            frame.storages |= local
        elif self._is_array(value):
            frame.arrays |= local
            self.array_attrs |= attrs
        elif self._holds_data(value):
            frame.data |= local
        elif isinstance(value, ast.Call) and self.names.resolve(value.func) in _IN_MEMORY_FILES:
            self.in_memory_files |= local | attrs

    def _bind_file_values(self, module):
        """Module-level names bound to NumPy arrays or in-memory files, and the `self.`
        attributes any function binds to them, before the walk: a use may come first."""
        module_frame = _Frame("module", "")
        self.array_globals = module_frame.arrays
        functions = [n for n in ast.walk(module) if isinstance(n, (ast.FunctionDef,
                     ast.AsyncFunctionDef, ast.Lambda)) and id(n) not in self.kernel_function_ids]
        for _ in range(2):  # values passed between methods through `self.`
            self._array_memo.clear()
            for stmt in _module_level_statements(module.body):
                if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                    self._bind_value(module_frame, list(_flatten_targets(targets)), stmt.value)
            for function in functions:
                frame = _Frame("function", "", _parameter_names(function.args), node=function)
                body = [function.body] if isinstance(function, ast.Lambda) else function.body
                self.frames = [frame]
                self._array_memo.clear()
                try:
                    self._bind_local_values(frame, body)
                finally:
                    self.frames = []
                    self._array_memo.clear()
                self._bound_values[id(function)] = (frame.arrays, frame.data, frame.storages)

    # -- values --------------------------------------------------------------------------------

    def _is_storage(self, expr):
        """`x.untyped_storage()`, `x.storage()`, or a local name bound to one."""
        if isinstance(expr, ast.Name):
            return self._bound_to(expr.id, "storages")
        return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) \
            and expr.func.attr in _STORAGE_METHODS and not expr.args

    def _is_array(self, expr):
        """A NumPy array: what a NumPy or SciPy call or `.numpy()` returns, a name or `self.`
        attribute bound to one, and what is reached from one (`a.T`, `a[0]`, `a * 2`)."""
        key = id(expr)
        if key not in self._array_memo:
            self._array_memo[key] = self._find_array(expr)
        return self._array_memo[key]

    def _find_array(self, expr):
        if isinstance(expr, ast.Name):
            return self._bound_to(expr.id, "arrays") or expr.id in self.array_globals
        if isinstance(expr, ast.Attribute):
            if isinstance(expr.value, ast.Name) and expr.value.id == "self":
                return expr.attr in self.array_attrs
            return expr.attr not in _METADATA_ATTRS and self._is_array(expr.value)
        if isinstance(expr, ast.Subscript):
            return self._is_array(expr.value)
        if isinstance(expr, ast.BinOp):
            return self._is_array(expr.left) or self._is_array(expr.right)
        if isinstance(expr, ast.Call):
            qualname = self.names.resolve(expr.func)
            if _is_numpy_view(self.names, expr, qualname):
                return True
            receiver = _method(self.names, expr)[0]
            if receiver is not None and self._is_array(receiver):
                return True
            return _is_numpy_name(qualname) and not self._numpy_bookkeeping(expr, qualname)
        return False

    def _holds_data(self, expr):
        """Whether an expression holds tensor data: read into Python (`.item()`, `.tolist()`,
        names bound to such data or looping over it) or in a NumPy array. One look at each
        node (_is_data_source), so deep expressions cost no more than their size."""
        return any(self._is_data_source(node) for node in ast.walk(expr))

    def _is_data_source(self, node):
        """A node that by itself holds tensor data or an array, whatever it contains."""
        if isinstance(node, ast.Name):
            return self._bound_to(node.id, "data") or self._bound_to(node.id, "arrays") \
                or node.id in self.array_globals
        if isinstance(node, ast.Attribute):
            return isinstance(node.value, ast.Name) and node.value.id == "self" \
                and node.attr in self.array_attrs
        if isinstance(node, ast.Call):
            if _method(self.names, node)[1] in _EXTRACTING_METHODS and not node.args:
                return True
            qualname = self.names.resolve(node.func)
            return _is_numpy_view(self.names, node, qualname) or (
                _is_numpy_name(qualname) and qualname.rpartition(".")[2] not in
                _MATH_SHAPE_HELPERS + _NUMPY_SCALARS + _NUMPY_METADATA)
        return False

    def _may_hold_tensor(self, expr):
        """Whether an expression may be a tensor or tensor data: it holds data, or reaches a
        parameter other than through its sizes (`x.shape`, `x.numel()`, `len(x)`)."""
        if self._is_data_source(expr):
            return True
        if isinstance(expr, ast.Name):
            return expr.id in self._params()
        if isinstance(expr, ast.Attribute):
            return expr.attr not in _METADATA_ATTRS and self._may_hold_tensor(expr.value)
        if isinstance(expr, ast.Call):
            func = expr.func
            if isinstance(func, ast.Attribute) and func.attr in _SIZE_METHODS:
                return False
            if isinstance(func, ast.Name) and func.id in _SIZE_BUILTINS:
                return False
            parts = list(expr.args) + [k.value for k in expr.keywords]
            if isinstance(func, ast.Attribute):
                parts.append(func.value)
            return any(self._may_hold_tensor(p) for p in parts)
        return any(self._may_hold_tensor(c) for c in ast.iter_child_nodes(expr)
                   if isinstance(c, ast.expr))

    def _iterates_data(self, iterable):
        return self._is_storage(iterable) or self._may_hold_tensor(iterable)

    def _numpy_bookkeeping(self, call, qualname):
        """NumPy dtype facts, and its shape helpers and scalar constructors on values that are
        no tensor data (`np.prod(x.shape)`, `np.float32(0.5)`)."""
        root, _, leaf = qualname.partition(".")
        if root != "numpy" or "." in leaf:
            return False
        if leaf in _NUMPY_METADATA:
            return True
        values = list(call.args) + [k.value for k in call.keywords]
        return leaf in _MATH_SHAPE_HELPERS + _NUMPY_SCALARS \
            and not any(self._may_hold_tensor(v) for v in values)

    def _is_in_memory_file(self, expr):
        if isinstance(expr, ast.Call):
            return self.names.resolve(expr.func) in _IN_MEMORY_FILES
        if isinstance(expr, ast.Attribute):
            return isinstance(expr.value, ast.Name) and expr.value.id == "self" \
                and expr.attr in self.in_memory_files
        return isinstance(expr, ast.Name) and expr.id in self.in_memory_files

    # -- scopes --------------------------------------------------------------------------------

    def visit_Module(self, node):
        self.local_classes = {s.name: s for s in _module_level_statements(node.body)
                              if isinstance(s, ast.ClassDef)}
        self._bind_file_values(node)
        self._check_sensitive_strings(node)
        self.compensated_dots = _compensated_products(node)
        self.compensated_casts = _compensated_splits(node, self.names) \
            if self.compensated_dots else set()
        if self.model_new is not None:
            self._check_model_new_bases(self.model_new)
        self.generic_visit(node)

    def visit_ClassDef(self, node):
        for expr in node.decorator_list + node.bases + [k.value for k in node.keywords]:
            self.visit(expr)
        self._check_tensor_subclass(node)
        self._with_frame(_Frame("class", node.name), node.body)

    def visit_FunctionDef(self, node):
        for expr in node.decorator_list:
            self.visit(expr)
        self.visit(node.args)
        if node.returns:
            self.visit(node.returns)
        self._check_function_definition(node)
        if id(node) in self.kernel_function_ids:
            frame = _Frame("kernel", node.name)
        else:
            frame = _Frame("function", node.name, _parameter_names(node.args),
                           _local_cache_keys(node.body), node)
        self._with_frame(frame, node.body)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        self.visit(node.args)
        self._with_frame(_Frame("function", "<lambda>", _parameter_names(node.args), node=node),
                         [node.body])

    # -- statements ----------------------------------------------------------------------------

    def visit_Try(self, node):
        self._check_try(node)
        self.generic_visit(node)

    visit_TryStar = visit_Try

    def visit_With(self, node):
        for item in node.items:
            expr = item.context_expr
            if isinstance(expr, ast.Call) and self.names.resolve(expr.func) == \
                    "contextlib.suppress" and self._fallback_scope(node.body):
                self.observe("try_except", node, f"contextlib.suppress({_unparse_args(expr)}) "
                             f"in {self._where()} swallows exceptions")
        self.generic_visit(node)

    visit_AsyncWith = visit_With

    def visit_Assign(self, node):
        self._check_assignment(node.targets, node.value, "reassigned")
        self.generic_visit(node)

    def visit_AnnAssign(self, node):
        if node.value is not None:
            self._check_assignment([node.target], node.value, "reassigned")
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self._check_assignment([node.target], node.value, "modified")
        self.generic_visit(node)

    def visit_Delete(self, node):
        self._check_assignment(node.targets, None, "deleted")
        self.generic_visit(node)

    def visit_Import(self, node):
        for alias in node.names:
            self._check_import(node, alias.name, f"import {alias.name}")

    def visit_ImportFrom(self, node):
        module = _import_target(None, node.level, node.module or "")
        for alias in node.names:
            full = module if alias.name == "*" else _import_target(node.module, node.level,
                                                                   alias.name)
            self._check_import(node, full, f"from {module} import {alias.name}")

    # -- expressions ---------------------------------------------------------------------------

    def visit_Name(self, node):
        if id(node) not in self._judged:
            self._check_name_use(node, node.id)
            self._check_reference(node, self.names.resolve(node))

    def visit_Attribute(self, node):
        if node.attr in _INTROSPECTION_ATTRS:
            self.observe("introspection", node, f"attribute {node.attr} accessed")
        if node.attr in _SUBCLASS_FACTORIES:
            self.observe("tensor_subclass", node, f"{node.attr} used")
        if node.attr in _RAW_BYTES_ATTRS:
            self.observe("raw_bytes", node, f"attribute {node.attr} accessed")
        if node.attr == "__dict__" and _matches(self.names.resolve(node.value) or "",
                                                _WATCHED_NAMESPACES):
            self.observe("introspection", node, f"the members of "
                                                f"{self.names.resolve(node.value)} are listed")
        qualname = self.names.resolve(node)
        if node.attr in _TORCH_INTERNAL_ATTRS and qualname is None \
                and getattr(_chain_root(node), "id", None) not in ("self", "cls"):
            # `__import__("torch")._C`, `sys.modules["torch"]._C`: a receiver the stage cannot
            # name (torch's own names are judged with the chain below; `self._C` is the
            # candidate's own attribute).
            self.observe("torch_internals", node,
                         f"attribute {node.attr} of {_unparse(node.value)}")
        if qualname is not None and id(node) not in self._judged:
            # The whole chain is judged by its longest name; its prefixes are not judged again.
            inner = node.value
            while isinstance(inner, (ast.Attribute, ast.Name)):
                self._judged.add(id(inner))
                inner = getattr(inner, "value", None)
            root = _chain_root(node)
            self._check_name_use(root, root.id)
            self._check_reference(node, qualname)
        self.generic_visit(node)

    def visit_Subscript(self, node):
        kernel = self._kernel_of(node.value)
        if kernel and isinstance(node.ctx, ast.Load):
            self.launches.append({"kernel": kernel, "line": node.lineno})
        if self.names.resolve(node.value) == "sys.modules":
            if not isinstance(node.ctx, ast.Load):
                self._judged.add(id(node.value))  # reported as tampering below, not as a read
            self._check_module_string(node, node.slice, "sys.modules[...]")
        if isinstance(node.ctx, ast.Load):
            self._check_member(node)
            if self._is_storage(node.value) and self._in_reached_host_code():
                self.observe("raw_bytes", node, f"indexing a storage reads tensor bytes in "
                                                f"{self._where()}")
        self._check_cache_access(node, node.value, node.slice, with_inputs=False)
        self._check_namespace_dict_store(node)
        self.generic_visit(node)

    def visit_Compare(self, node):
        operands = [node.left] + node.comparators
        for left, op, right in zip(operands, node.ops, operands[1:]):
            if isinstance(op, (ast.In, ast.NotIn)):
                self._check_cache_access(node, right, left)
            elif isinstance(op, (ast.Is, ast.IsNot)):
                self._check_identity_cache(node, left, right)
        self.generic_visit(node)

    def visit_Constant(self, node):
        if isinstance(node.value, str) and self.depth < _MAX_CODE_IN_STRINGS_DEPTH:
            for obs in _code_in_string_observations(node.value, self.depth + 1):
                self.observations.append({
                    "kind": obs["kind"], "line": getattr(node, "lineno", 1) + obs["line"] - 1,
                    "detail": f"code in a string: {obs['detail']}"})

    def visit_BinOp(self, node):
        if self._in_reached_host_code() and (self._is_array(node.left)
                                             or self._is_array(node.right)):
            self.observe("numpy_compute", node, f"arithmetic on a NumPy array in {self._where()}")
        self.generic_visit(node)

    def visit_For(self, node):
        self._check_storage_loop(node.iter)
        self.generic_visit(node)

    visit_AsyncFor = visit_For

    def visit_comprehension(self, node):
        self._check_storage_loop(node.iter)
        self.generic_visit(node)

    def visit_Call(self, node):
        func = node.func
        if isinstance(func, ast.Attribute):
            if func.attr in ("run", "warmup"):
                kernel = self._kernel_of(func.value)
                if kernel:
                    self.launches.append({"kernel": kernel, "line": node.lineno})
            if func.attr in _CACHE_LOOKUP_METHODS and node.args:
                self._check_cache_access(node, func.value, node.args[0])
            if func.attr in _SYS_MODULES_MUTATORS and \
                    self.names.resolve(func.value) == "sys.modules":
                self._judged.update((id(func), id(func.value)))
                self.observe("timer_patch", node, f"sys.modules.{func.attr}() call")
        qualname = self.names.resolve(func)
        self._check_host_compute(node, qualname)
        self._check_raw_bytes(node, qualname)
        self._check_member(node)
        self._check_namespace_listing(node, qualname)
        if node.args and (qualname in _IMPORT_FUNCTIONS or (
                qualname == "__import__" and self.names.is_builtin("__import__"))):
            self._check_module_string(node, node.args[0], qualname)
        if isinstance(func, ast.Attribute) and func.attr == "get" and node.args \
                and self.names.resolve(func.value) == "sys.modules":
            self._check_module_string(node, node.args[0], "sys.modules.get")
        self._check_casts(node, qualname)
        self._check_setattr(node, qualname)
        self._check_dynamic_import(node, qualname)
        self._check_super_forward(node)
        self.generic_visit(node)

    # -- checks --------------------------------------------------------------------------------

    def _kernel_of(self, expr):
        if isinstance(expr, ast.Name):
            name = expr.id
        elif isinstance(expr, ast.Attribute):
            name = expr.attr
        else:
            return None
        if name in self.kernels:
            return name
        return self.kernel_aliases.get(name)

    def _fallback_scope(self, body):
        """Whether a try/suppress here could hide a failing kernel behind a fallback."""
        if self._in_kernel():
            return False
        return bool(self.frames) or not _only_imports(body)

    def _check_try(self, node):
        if not node.handlers or self._in_kernel():
            return
        # Import guards: at module level a try holding only imports, or catching only import
        # errors; inside a function (a lazy import) a try that is both.
        imports_only = _only_imports(node.body)
        import_errors_only = all(_catches_only_import_errors(self.names, h)
                                 for h in node.handlers)
        if self.frames:
            guard = imports_only and import_errors_only
        else:
            guard = imports_only or import_errors_only
        if guard:
            return
        for handler in node.handlers:
            if not _only_reraises(handler):
                caught = _unparse(handler.type) if handler.type else "bare except"
                self.observe("try_except", node,
                             f"try/except {caught} in {self._where()} does not re-raise")
                return

    def _check_import(self, node, module, detail):
        for kind, patterns in _REPORTED_IMPORTS:
            if _matches(module, patterns):
                self.observe(kind, node, detail)
        if module.startswith(_PROCESS_PREFIXES):
            self.observe("process_or_network", node, detail)
        if _is_torch_internal(module):
            self.observe("torch_internals", node, detail)
        stem = self.reference_stem
        if stem and (stem in module.lstrip(".").split(".")):
            self.observe("reference_model_use", node, f"{detail}: imports the reference file")

    def _check_name_use(self, node, name):
        if name == "Model" and isinstance(node.ctx, ast.Load):
            self.observe("reference_model_use", node, "the reference's name Model is used")
        elif name == "__builtins__":
            self.observe("introspection", node, "__builtins__ accessed")

    def _check_reference(self, node, qualname):
        if not qualname:
            return
        if _matches(qualname, _THREADING):
            self.observe("threading", node, f"{qualname} used")
        if _matches(qualname, _PROCESS_OR_NETWORK) or qualname.startswith(_PROCESS_PREFIXES):
            self.observe("process_or_network", node, f"{qualname} used")
        if _matches(qualname, _INTROSPECTION) or (
                qualname in _DYNAMIC_CODE_BUILTINS and self.names.is_builtin(qualname)):
            self.observe("introspection", node, f"{qualname} used")
        parts = qualname.split(".")
        if len(parts) > 1 and parts[0] in _PRIVATE_FRAME_NAMESPACES \
                and parts[1].startswith("_") and not parts[1].startswith("__"):
            self.observe("introspection", node, f"{qualname} used")
        if len(parts) == 3 and parts[:2] == ["sys", "path"] and parts[2] in _LIST_MUTATORS:
            self.observe("introspection", node, f"{qualname}() changes where imports come from")
        if _is_torch_internal(qualname):
            self.observe("torch_internals", node, f"{qualname} used")
        if qualname in _BYTE_VIEWS and (qualname != "memoryview"
                                        or self.names.is_builtin("memoryview")):
            self.observe("raw_bytes", node, f"{qualname} used")
        root = _chain_root(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
        if _matches(qualname, _RAW_BYTES_MODULES) and (root is None
                                                      or root.id in self.names.aliases):
            # Only an imported module: a bare `array` from a star import is NumPy's.
            self.observe("raw_bytes", node, f"{qualname} used")

    def _check_assignment(self, targets, value, verb):
        for target in _flatten_targets(targets):
            if isinstance(target, ast.Attribute):
                qualname = self.names.resolve(target)
                if _is_harness_name(qualname):
                    self.observe("timer_patch", target, f"{qualname} {verb}")
                if qualname == "sys.path":
                    self.observe("introspection", target, f"sys.path {verb}")
                self._check_precision_flag(target, target.attr, value)
                self._check_pointer_stored(target, value)
            elif isinstance(target, ast.Subscript):
                owner = self.names.resolve(target.value)
                if owner == "sys.modules":
                    self.observe("timer_patch", target, f"sys.modules[...] {verb}")
                elif owner == "sys.path":
                    self.observe("introspection", target, f"sys.path[...] {verb}")
            elif isinstance(target, ast.Name) and target.id in _SUBCLASS_HOOKS:
                self.observe("tensor_subclass", target, f"{target.id} assigned")
            self._check_array_store(target, verb)

    def _check_array_store(self, target, verb):
        """`a[...] = v`, `a += v` on a NumPy array: NumPy computes, unseen by the profiler."""
        if verb == "deleted" or not self._in_reached_host_code():
            return
        if isinstance(target, ast.Subscript) and self._is_array(target.value):
            self.observe("numpy_compute", target, f"{_unparse(target.value)}[...] {verb} (a "
                                                  f"NumPy array) in {self._where()}")
        elif verb == "modified" and self._is_array(target):
            self.observe("numpy_compute", target, f"{_unparse(target)} (a NumPy array) "
                                                  f"modified in place in {self._where()}")

    def _check_precision_flag(self, node, attr, value):
        if attr in _REDUCED_PRECISION_FLAGS and _is_constant(value, True):
            self.observe("low_precision_cast", node, f"{attr} = True")
        elif attr == "fp32_precision" and _is_constant(value, "tf32"):
            self.observe("low_precision_cast", node, "fp32_precision = 'tf32'")

    def _check_pointer_stored(self, target, value):
        """`self.ptr = x.data_ptr()`: remembering which input was seen last."""
        if value is None or not self._in_host_function() or not self._is_stored(target):
            return
        kind = _cache_key_kind(value, local_keys=self._function_frame().local_keys)
        if kind in ("id(...)", ".data_ptr()"):
            self.observe("memoization", target, f"{kind} stored on {_unparse(target)}")

    def _check_setattr(self, node, qualname):
        """setattr(torch.cuda, ...), mock.patch("time.perf_counter"), mock.patch.object(...)."""
        if not qualname or not node.args:
            return
        first = node.args[0]
        if qualname in ("setattr", "delattr", "builtins.setattr", "builtins.delattr") \
                or qualname.endswith("mock.patch.object"):
            target = self.names.resolve(first)
        elif qualname.endswith("mock.patch") and isinstance(first, ast.Constant) \
                and isinstance(first.value, str):
            target = first.value
        else:
            return
        if _is_harness_name(target):
            self.observe("timer_patch", node, f"{qualname.rpartition('.')[2]} on {target}")

    def _check_namespace_dict_store(self, node):
        """`torch.cuda.__dict__["synchronize"] = ...`: an assignment by another route."""
        if isinstance(node.ctx, ast.Load) or not isinstance(node.value, ast.Attribute) \
                or node.value.attr != "__dict__":
            return
        owner = self.names.resolve(node.value.value)
        if _is_harness_name(owner):
            self.observe("timer_patch", node, f"{owner}.__dict__[...] assigned")

    def _check_dynamic_import(self, node, qualname):
        """importlib.import_module("reference"), __import__("reference"), runpy.run_path(...)."""
        stem = self.reference_stem
        if not stem or not qualname or not (
                _matches(qualname, ("importlib", "runpy", "builtins.__import__"))
                or qualname == "__import__"):
            return
        for arg in node.args:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                name = os.path.basename(arg.value)
                if name in (stem, stem + ".py") or stem in arg.value.split("."):
                    self.observe("reference_model_use", node,
                                 f"{qualname}({arg.value!r}) loads the reference file")
                    return

    def _check_host_compute(self, node, qualname):
        """In code ModelNew reaches: NumPy and SciPy compute, NumPy views of tensors and what
        is done with them, math on tensor data (numpy_compute); tensor data read into Python
        (host_transfer: a scalar for a grid is honest, so that is evidence only)."""
        if not self._in_reached_host_code():
            return
        func, where = node.func, self._where()
        receiver, method = _method(self.names, node)
        if _is_numpy_view(self.names, node, qualname):
            self.observe("numpy_compute", node, f"{_unparse(func)}() makes a NumPy array of "
                                                f"tensor data in {where}")
        elif method in _HOST_TRANSFER_METHODS and not node.args:
            if not self._is_storage(receiver):  # a storage's elements are its bytes
                self.observe("host_transfer", node, f".{method}() call in {where}")
        elif receiver is not None and self._is_array(receiver):
            self.observe("numpy_compute", node, f".{method or '<computed>'}() on a NumPy array "
                                                f"in {where}")
        elif _is_numpy_name(qualname):
            if not self._numpy_bookkeeping(node, qualname):
                self.observe("numpy_compute", node, f"{qualname}() call in {where}")
        elif (qualname or "").startswith("math.") and qualname[5:] not in _MATH_SHAPE_HELPERS \
                and any(self._holds_data(a) for a in node.args):
            # math takes one Python number at a time: compute on tensor data needs the data
            # read out first (`.tolist()`, `.item()`, a loop over the tensor).
            self.observe("numpy_compute", node, f"{qualname}() on tensor data in {where}")

    def _check_raw_bytes(self, node, qualname):
        """Tensor bytes reached from Python in code ModelNew reaches: a storage's elements,
        bytes()/memoryview() of a tensor, storage or array, torch.save into memory, copies of
        storages. (Byte modules and the pickling protocol are judged with names.)"""
        if not self._in_reached_host_code():
            return
        func, where = node.func, self._where()
        builtin = func.id if isinstance(func, ast.Name) and self.names.is_builtin(func.id) \
            else None
        if isinstance(func, ast.Attribute) and func.attr in ("tolist", "__getitem__", "__iter__") \
                and self._is_storage(func.value):
            self.observe("raw_bytes", node, f"storage .{func.attr}() reads tensor bytes in "
                                            f"{where}")
        if builtin in _BYTE_BUILTINS and len(node.args) == 1 and not node.keywords \
                and not _is_text(node.args[0]):
            self.observe("raw_bytes", node, f"{builtin}({_unparse(node.args[0])}) in {where}")
        elif (builtin in _ITERATING_BUILTINS or qualname in ("copy.copy", "copy.deepcopy")) \
                and any(self._is_storage(a) for a in node.args):
            self.observe("raw_bytes", node, f"{builtin or qualname}() of a storage in {where}")
        if qualname == "torch.frombuffer":
            self.observe("raw_bytes", node, f"torch.frombuffer() makes a tensor over Python "
                                            f"bytes in {where}")
        if qualname in ("torch.save", "torch.load") and any(
                self._is_in_memory_file(a) for a in list(node.args) + [k.value for k in
                                                                        node.keywords]):
            self.observe("raw_bytes", node, f"{qualname}() through an in-memory file in {where}")

    def _check_storage_loop(self, iterable):
        if self._is_storage(iterable) and self._in_reached_host_code():
            self.observe("raw_bytes", iterable, f"a loop over a storage reads tensor bytes in "
                                                f"{self._where()}")

    def _member_by_name(self, node):
        """(owner, name expression) for a member reached by a string: getattr(owner, name),
        owner.__getattribute__(name), object.__getattribute__(owner, name),
        owner.__dict__[name], owner.__dict__.get(name), vars(owner)[name]; else None."""
        if isinstance(node, ast.Subscript):
            owner = node.value
            if isinstance(owner, ast.Attribute) and owner.attr == "__dict__":
                return owner.value, node.slice
            if isinstance(owner, ast.Call) and len(owner.args) == 1 \
                    and self.names.resolve(owner.func) in ("vars", "builtins.vars"):
                return owner.args[0], node.slice
            return None
        func = node.func
        qualname = self.names.resolve(func)
        if qualname in _MEMBER_FUNCTIONS and len(node.args) >= 2:
            return node.args[0], node.args[1]
        if isinstance(func, ast.Attribute) and len(node.args) == 1:
            if func.attr == "__getattribute__":
                return func.value, node.args[0]
            if func.attr == "get" and isinstance(func.value, ast.Attribute) \
                    and func.value.attr == "__dict__":
                return func.value.value, node.args[0]
        return None

    def _check_member(self, node):
        """A member reached by name is judged like the attribute: `getattr(torch, "_C")` is
        torch._C, `getattr(frame, "f" + "_back")` walks frames. A name the folder cannot
        compute is judged by its owner: a computed name on a watched module, or one built from
        literals by means the folder does not follow, is hiding what it fetches."""
        found = self._member_by_name(node)
        if not found:
            return
        owner, name_expr = found
        name = self.names.folder.text(name_expr)
        owner_name = self.names.resolve(owner)
        if name is None:
            self._check_computed_member(node, owner_name, name_expr)
            return
        how = f"{name} reached by name"
        if name in _INTROSPECTION_ATTRS:
            self.observe("introspection", node, how)
        if name in _RAW_BYTES_ATTRS:
            self.observe("raw_bytes", node, how)
        if name in _NUMPY_VIEW_METHODS and self._in_reached_host_code():
            self.observe("numpy_compute", node, f"{name} fetched by name makes a NumPy array "
                                                f"of tensor data in {self._where()}")
        if owner_name:
            self._check_reference(node, f"{owner_name}.{name}")
            if _is_numpy_name(owner_name) and name not in _NUMPY_METADATA:
                self.observe("numpy_compute", node, f"{owner_name}.{name} fetched by name")
        elif name in _TORCH_INTERNAL_ATTRS:
            self.observe("torch_internals", node, f"{how} on {_unparse(owner)}")

    def _check_computed_member(self, node, owner_name, name_expr):
        for kind, modules in _COMPUTED_NAME_OWNERS:
            if owner_name and _matches(owner_name, modules):
                self.observe(kind, node, f"a member of {owner_name} fetched by a computed "
                                         f"name ({_unparse(name_expr)})")
                return
        if _built_from_literals(self.names, name_expr):
            self.observe("introspection", node, f"a member fetched by a name built from "
                                                f"literals ({_unparse(name_expr)})")

    def _check_sensitive_strings(self, tree):
        """Strings that name something the stage watches, however they are built (folded
        from the outside in) and however the name then reaches getattr: a helper,
        functools.reduce, operator.attrgetter."""
        pending = [tree]
        while pending:
            node = pending.pop()
            if isinstance(node, (ast.Constant, ast.BinOp, ast.JoinedStr, ast.Subscript,
                                 ast.Call)):
                text = self.names.folder.text(node)
                if text is not None:
                    kind = _sensitive_string_kind(text)
                    if kind:
                        self.observe(kind, node, f"the string {text!r} spells a watched name")
                    continue  # its parts are folded with it
            pending.extend(ast.iter_child_nodes(node))

    def _check_namespace_listing(self, node, qualname):
        """dir(torch), vars(sys), torch.__dict__: listing a watched module's members, the way
        to a name no string in the file spells."""
        owner = None
        if qualname in ("dir", "vars", "builtins.dir", "builtins.vars") and len(node.args) == 1:
            owner = self.names.resolve(node.args[0])
        if owner and _matches(owner, _WATCHED_NAMESPACES):
            self.observe("introspection", node, f"the members of {owner} are listed")

    def _check_module_string(self, node, expr, how):
        """importlib.import_module("torch._C"), sys.modules["pickle"]: a module named by a
        string is judged like an import of it."""
        module = self.names.folder.text(expr)
        if module is None:
            return
        detail = f"{how}({module!r})"
        if _is_torch_internal(module):
            self.observe("torch_internals", node, detail)
        if _matches(module, _RAW_BYTES_MODULES):
            self.observe("raw_bytes", node, detail)

    def _check_casts(self, node, qualname):
        if id(node) in self.compensated_casts:
            return
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("half", "bfloat16") \
                and not node.args:
            self.observe("low_precision_cast", node, f".{func.attr}() cast")
            return
        is_cast = (isinstance(func, ast.Attribute) and func.attr in _CAST_METHODS) \
            or qualname in _CAST_FUNCTIONS
        where = f".{func.attr}" if isinstance(func, ast.Attribute) else qualname
        values = list(node.args) if is_cast else []
        values += [k.value for k in node.keywords
                   if k.arg in _DTYPE_KEYWORDS or (is_cast and k.arg is not None)]
        for value in values:
            if _is_low_precision_dtype(self.names, value):
                self.observe("low_precision_cast", node,
                             f"{where}(...) with {self.names.resolve(value)}")
                return  # one observation per call
        reason = self._reduced_precision_call(node, qualname)
        if reason:
            self.observe("low_precision_cast", node, reason)

    def _reduced_precision_call(self, node, qualname):
        """tf32 switches and autocast: lower precision without naming a dtype."""
        for keyword in node.keywords:
            if keyword.arg == "allow_tf32" and _is_constant(keyword.value, True):
                return "allow_tf32=True"
            if keyword.arg == "input_precision" and _is_constant(keyword.value, "tf32") \
                    and id(node) not in self.compensated_dots:
                return "input_precision='tf32'"
        if qualname in _AUTOCAST and not any(
                k.arg == "enabled" and _is_constant(k.value, False) for k in node.keywords):
            return f"{qualname}() autocast"
        if qualname == "torch.set_float32_matmul_precision" and node.args \
                and _is_constant(node.args[0], "high", "medium"):
            return f"float32 matmul precision set to {node.args[0].value!r} (tf32)"
        return None

    def _check_super_forward(self, node):
        """`super().forward(x)` in ModelNew runs the base class: reuse when that base is not
        nn.Module (whose forward is abstract)."""
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "forward"
                and isinstance(func.value, ast.Call) and isinstance(func.value.func, ast.Name)
                and func.value.func.id == "super" and self._in_model_new()):
            return
        if self._foreign_bases(self.model_new):
            self.observe("reference_model_use", node,
                         "super().forward() runs the base class's forward")

    def _check_function_definition(self, node):
        if node.name in _SUBCLASS_HOOKS:
            self.observe("tensor_subclass", node, f"{node.name} defined")
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if self.names.resolve(target) in _MEMO_DECORATORS:
                self.observe("memoization", decorator,
                             f"{self.names.resolve(target)} on {node.name}")

    def _check_tensor_subclass(self, node):
        for base in node.bases:
            if self._derives_from(base, lambda q: q in _TENSOR_BASES, set()):
                self.observe("tensor_subclass", node,
                             f"class {node.name} derives from torch.Tensor ({_unparse(base)})")
            elif (self.names.resolve(base) or "").rpartition(".")[2] in _DISPATCH_MODE_LEAVES:
                self.observe("tensor_subclass", node,
                             f"class {node.name} derives from {_unparse(base)}")

    def _derives_from(self, base, accept, seen):
        """Whether a base expression is, or (through classes of this file) derives from, a
        class `accept` recognises by qualified name."""
        if accept(self.names.resolve(base)):
            return True
        if isinstance(base, ast.Name) and base.id in self.local_classes and base.id not in seen:
            seen.add(base.id)
            return any(self._derives_from(b, accept, seen)
                       for b in self.local_classes[base.id].bases)
        return False

    def _is_plain_module_base(self, base, seen):
        """nn.Module, or a helper class of this file that derives only from nn.Module."""
        if self.names.resolve(base) in _MODULE_BASES:
            return True
        if isinstance(base, ast.Name) and base.id != "Model" and base.id in self.local_classes:
            if base.id in seen:
                return False
            seen.add(base.id)
            bases = self.local_classes[base.id].bases
            return bool(bases) and all(self._is_plain_module_base(b, seen) for b in bases)
        return False

    def _foreign_bases(self, model_new):
        return [b for b in model_new.bases if not self._is_plain_module_base(b, set())]

    def _check_model_new_bases(self, model_new):
        for base in self._foreign_bases(model_new):
            root = _chain_root(base)
            if root is not None:
                self._judged.add(id(root))  # reported here, not again as a use of the name
            self.observe("reference_model_use", model_new,
                         f"ModelNew inherits from {_unparse(base)}, not nn.Module")

    def _is_stored(self, container):
        """State that outlives a forward call: an attribute of self/cls/the class, or a global."""
        while isinstance(container, ast.Subscript):
            container = container.value
        if isinstance(container, ast.Attribute):
            root = _chain_root(container)
            return root is not None and root.id in ("self", "cls", "ModelNew")
        return isinstance(container, ast.Name) and container.id in self.module_globals \
            and container.id not in self._params()

    def _check_cache_access(self, node, container, key, with_inputs=True):
        """A lookup in stored state keyed by something that identifies the inputs. An input
        itself counts as a key only for dict operations (`in`, `.get`): `self.table[idx]`
        is ordinary tensor indexing."""
        if not self._in_host_function() or not self._is_stored(container):
            return
        params = self._params() if with_inputs and self._in_model_new() else frozenset()
        kind = _cache_key_kind(key, params, self._function_frame().local_keys)
        if kind:
            self.observe("memoization", node,
                         f"{_unparse(container)} looked up by {kind} in {self._where()}")

    def _check_identity_cache(self, node, left, right):
        """`x is self._last_x`: recognising an input seen before."""
        if not self._in_host_function():
            return
        params = self._params()
        for stored, other in ((left, right), (right, left)):
            if self._is_stored(stored) and isinstance(other, ast.Name) and other.id in params:
                self.observe("memoization", node,
                             f"identity of {other.id} compared with {_unparse(stored)}")
                return


def _flatten_targets(targets):
    for target in targets:
        if isinstance(target, (ast.Tuple, ast.List)):
            yield from _flatten_targets(target.elts)
        elif isinstance(target, ast.Starred):
            yield from _flatten_targets([target.value])
        else:
            yield target


def _is_text(expr):
    """A string or number, not data: `bytes("abc", ...)`, `bytes(f"{n}")`, `bytes(str(n))`."""
    if isinstance(expr, (ast.Constant, ast.JoinedStr)):
        return True
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) \
        and expr.func.id in ("str", "repr", "format")


def _unparse_args(call):
    return ", ".join(_unparse(a) for a in call.args)


def _module_globals(tree):
    names = set()
    for stmt in _module_level_statements(tree.body):
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names.update(t.id for t in _flatten_targets(targets) if isinstance(t, ast.Name))
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            names.update(node.names)
    return names


# ---------------------------------------------------------------------------------------------
# Candidate facts and the stage


def _reference_stem(reference_path):
    if not reference_path:
        return None
    stem = os.path.splitext(os.path.basename(reference_path))[0]
    return None if not stem.isidentifier() or stem in _WELL_KNOWN_MODULES else stem


def _unique_sorted(observations):
    seen, result = set(), []
    for obs in sorted(observations, key=lambda o: (o["line"], o["kind"], o["detail"])):
        key = (obs["kind"], obs["line"], obs["detail"])
        if key not in seen:
            seen.add(key)
            result.append(obs)
    return result


def candidate_facts(path, reference_stem=None):
    facts = {"syntax_error": None, "model_new_line": None, "forward_line": None,
             "model_new_bases": [], "kernels": [], "launches": [], "observations": []}
    tree, error = _parse_file(path)
    if error:
        facts["syntax_error"] = error
        return facts
    with _recursion_head_room():
        try:
            _analyse_candidate(_imported_part(tree), reference_stem, facts)
        except RecursionError:
            return dict(facts, syntax_error=_syntax_error(
                "the code is nested too deeply to analyse"), kernels=[], launches=[],
                observations=[])
    return facts


def _compensated_products(tree):
    """ids of the tl.dot calls that write out compensated products themselves (3xTF32; Markidis
    et al., 2018; bf16x3 the same over bfloat16 parts): three products chained into one
    accumulator, `acc = tl.dot(x, y, acc, ...)` in one block, over two left and two right
    operands of which every pair but one appears (hi x hi, hi x lo, lo x hi of operands split
    into a TF32 or bfloat16 part and the rest). Together they keep far more than one pass's
    accuracy, so they are not a precision downgrade; the trials still judge the result."""
    found = set()
    for parent in ast.walk(tree):
        for field in ("body", "orelse"):
            chains = {}
            block = getattr(parent, field, None)  # a lambda's or an IfExp's body is one expr
            for stmt in block if isinstance(block, list) else ():
                link = _compensated_dot_into(stmt) if isinstance(stmt, ast.stmt) else None
                if link:
                    chains.setdefault(link[0], []).append(link[1:])
            for links in chains.values():
                pairs = {(a, b) for _, a, b in links}
                if len(links) == 3 and len(pairs) == 3 and len({a for a, _ in pairs}) == 2 \
                        and len({b for _, b in pairs}) == 2:
                    found.update(id(call) for call, _, _ in links)
    return found


def _compensated_dot_into(stmt):
    """(accumulator, call, left, right) for `acc = tl.dot(left, right, acc,
    input_precision="tf32")` with plain names, or the same without input_precision (the
    operands' own precision: bfloat16 parts), else None."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)):
        return None
    call = stmt.value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr == "dot" and len(call.args) >= 2
            and all(isinstance(a, ast.Name) for a in call.args[:2])
            and all(k.arg != "input_precision" or _is_constant(k.value, "tf32")
                    for k in call.keywords)):
        return None
    acc = call.args[2] if len(call.args) >= 3 else next(
        (k.value for k in call.keywords if k.arg == "acc"), None)
    target = stmt.targets[0].id
    if not (isinstance(acc, ast.Name) and acc.id == target):
        return None
    return target, call, call.args[0].id, call.args[1].id


def _compensated_splits(tree, names):
    """ids of the calls that split fp32 values into bfloat16 parts for compensated products,
    where the module also has such products (_compensated_products): in one block,
    `hi = v.to(tl.bfloat16)` and a bfloat16 cast of an expression holding v - hi.to(tl.float32)
    (directly or through a name assigned it), so that hi + lo keeps 16 of v's 24 bits; and the
    host's bfloat16 allocations (torch.empty and friends with dtype=torch.bfloat16) that hold
    them. Neither is a precision downgrade there; the trials still judge the result."""
    found = set()
    for parent in ast.walk(tree):
        block = getattr(parent, "body", None)
        if not isinstance(block, list):
            continue
        his, rests = {}, {}  # hi name -> (cast call, source name); rest name -> (source, hi)
        for stmt in block:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name)):
                continue
            source = _bf16_cast_of_name(stmt.value, names)
            if source:
                his[stmt.targets[0].id] = (stmt.value, source)
            pair = _remainder_of(stmt.value, names)
            if pair:
                rests[stmt.targets[0].id] = pair
        for stmt in block:
            for node in ast.walk(stmt):
                if not _is_bf16_cast(node, names):
                    continue
                for inner in ast.walk(node.func.value):
                    pair = _remainder_of(inner, names) or (
                        rests.get(inner.id) if isinstance(inner, ast.Name) else None)
                    if pair and pair[1] in his and his[pair[1]][1] == pair[0]:
                        found.update((id(node), id(his[pair[1]][0])))
                        break
    if found:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and names.resolve(node.func) in _BF16_ALLOCATORS \
                    and any(k.arg == "dtype" and names.resolve(k.value) == "torch.bfloat16"
                            for k in node.keywords):
                found.add(id(node))
    return found


_BF16_ALLOCATORS = ("torch.empty", "torch.empty_like", "torch.empty_strided", "torch.zeros",
                    "torch.zeros_like")


def _is_bf16_cast(node, names):
    """`x.to(tl.bfloat16)`: a method cast with one positional argument, bfloat16."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "to" and len(node.args) == 1 and not node.keywords
            and names.resolve(node.args[0]) == "triton.language.bfloat16")


def _bf16_cast_of_name(node, names):
    """v for `v.to(tl.bfloat16)` with v a plain name, else None."""
    if _is_bf16_cast(node, names) and isinstance(node.func.value, ast.Name):
        return node.func.value.id
    return None


def _remainder_of(node, names):
    """(v, hi) for `v - hi.to(tl.float32)` with plain names, else None."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub)
            and isinstance(node.left, ast.Name)):
        return None
    widen = node.right
    if (isinstance(widen, ast.Call) and isinstance(widen.func, ast.Attribute)
            and widen.func.attr == "to" and len(widen.args) == 1
            and isinstance(widen.func.value, ast.Name)
            and names.resolve(widen.args[0]) == "triton.language.float32"):
        return node.left.id, widen.func.value.id
    return None


_MAX_CODE_IN_STRINGS_DEPTH = 2
_MAX_CODE_IN_STRING = 200000  # characters: a longer string is not parsed


def _code_in_string_observations(text, depth):
    """The observations of Python code held in a string (written to a file and imported, or
    run by compile/exec): a string that parses as a module with a statement other than a bare
    expression (prose does not), on one line only an import (`"x=y"` is a setting, not code).
    The string is parsed, never run."""
    if len(text) > _MAX_CODE_IN_STRING or len(text.strip()) < 6:
        return []
    try:
        tree = ast.parse(textwrap.dedent(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    code = (ast.Import, ast.ImportFrom) if "\n" not in text.strip() else ast.stmt
    if not any(isinstance(stmt, code) and not isinstance(stmt, ast.Expr) for stmt in tree.body):
        return []
    facts = {"observations": []}
    _analyse_candidate(tree, None, facts, depth)
    return facts["observations"]


def _analyse_candidate(tree, reference_stem, facts, depth=0):
    names = _Names(tree)
    model_new = _last_definition(tree.body, ast.ClassDef, "ModelNew")
    if model_new is not None:
        facts["model_new_line"] = model_new.lineno
        facts["model_new_bases"] = [_unparse(b) for b in model_new.bases]
        facts["forward_line"] = _forward_line(model_new)
    kernels = _find_kernels(tree, names)
    facts["kernels"] = [k.fact() for k in kernels]
    visitor = _CandidateVisitor(names, kernels, _kernel_aliases(tree, {k.name for k in kernels}),
                                model_new, reference_stem, _module_globals(tree),
                                _model_new_reach(tree, model_new, names), depth)
    visitor.visit(tree)
    facts["launches"] = sorted(visitor.launches, key=lambda l: (l["line"], l["kernel"]))
    facts["observations"] = _unique_sorted(
        visitor.observations + _launch_hook_observations(tree, names, kernels))


def _forward_line(model_new):
    line = None
    for stmt in model_new.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == "forward":
            line = stmt.lineno
        elif isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "forward" for t in stmt.targets):
            line = stmt.lineno  # `forward = other_function`
    return line


def run(job, channel=None):
    """The static stage's facts (docs/WORKER_PROTOCOL.md). `channel` is unused: the caller
    writes the returned facts; no phases are reported for a stage that runs no user code."""
    del channel
    reference_path = job.get("reference_path")
    candidate_path = job.get("candidate_path")
    return {
        "reference": reference_facts(reference_path) if reference_path else None,
        "candidate": (candidate_facts(candidate_path, _reference_stem(reference_path))
                      if candidate_path else None),
    }
