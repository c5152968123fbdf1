"""The `static` stage: facts about the reference and candidate files from Python's `ast` alone.

Nothing here imports or executes the analysed files: they are read as bytes, decoded and parsed.
The stage reports what it sees (lines of the KernelBench entry points, Triton kernels, their
launch sites, and suspicious constructs as `observations`); the C++ judge decides what they mean.
The facts' shape and the closed vocabulary of observation kinds are in docs/WORKER_PROTOCOL.md.

Precision matters more than recall here: every observation can become a cheat flag, and dynamic
facts from the candidate stage catch most of what a static look misses.
"""
import ast
import contextlib
import io
import os
import sys
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
)
# Builtins that run or load arbitrary code: they can hide anything from a static look.
_DYNAMIC_CODE_BUILTINS = ("exec", "eval", "compile", "__import__")
# Attributes that walk frames or reach a function's globals, whatever the receiver.
_INTROSPECTION_ATTRS = (
    "f_back", "f_locals", "f_globals", "tb_frame", "gi_frame", "cr_frame", "ag_frame",
    "__globals__", "__code__", "__subclasses__",
)
# Importing these is reported by itself; for other modules only their use is.
_REPORTED_IMPORTS = (("threading", _THREADING), ("process_or_network", _PROCESS_OR_NETWORK),
                     ("introspection", ("ctypes", "_ctypes", "cffi")))

# Modules the harness times and compares with: assigning their attributes is tampering.
_TAMPER_ROOTS = ("time", "torch", "triton", "builtins", "sys", "gc", "numpy")
# Configuration namespaces change numerics, not the harness (the candidate runs in its own
# process, so they cannot slow the reference down); tf32 switches are reported as casts.
_CONFIG_NAMESPACES = ("torch.backends", "torch._dynamo.config", "torch._inductor.config")

_FOREIGN_COMPUTE_ROOTS = ("numpy", "scipy", "math")
# Integer and shape helpers of `math` that honest host code uses for grids and scales; math
# functions only take Python scalars, so compute on tensor data also needs .item()/.tolist(),
# which is reported by itself.
_MATH_SHAPE_HELPERS = ("ceil", "floor", "prod", "log2", "isqrt", "gcd", "lcm", "sqrt")
_HOST_TRANSFER_METHODS = ("numpy", "tolist", "item")

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
        self._add_assignment_aliases(tree)

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
                if parts and parts[0] in self.aliases:
                    name, resolved = node.targets[0].id, self.resolve(node.value)
                    candidates.setdefault(name, []).append(resolved)
        for name, values in candidates.items():
            if name not in self.aliases and name not in ambiguous \
                    and bindings.get(name) == len(values) and len(set(values)) == 1:
                self.aliases[name] = values[0]

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
    """A scope the visitor is in: a class body, a function, or a Triton kernel."""

    def __init__(self, kind, name, params=(), local_keys=None):
        self.kind, self.name, self.params = kind, name, frozenset(params)
        self.local_keys = local_keys or {}


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
                 module_globals):
        self.names = names
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

    # -- bookkeeping ---------------------------------------------------------------------------

    def observe(self, kind, node, detail):
        self.observations.append({"kind": kind, "line": getattr(node, "lineno", 1),
                                  "detail": detail})

    def _in_kernel(self):
        return any(f.kind == "kernel" for f in self.frames)

    def _in_host_function(self):
        return not self._in_kernel() and any(f.kind == "function" for f in self.frames)

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
        try:
            for node in nodes:
                self.visit(node)
        finally:
            self.frames.pop()

    # -- scopes --------------------------------------------------------------------------------

    def visit_Module(self, node):
        self.local_classes = {s.name: s for s in _module_level_statements(node.body)
                              if isinstance(s, ast.ClassDef)}
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
                           _local_cache_keys(node.body))
        self._with_frame(frame, node.body)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        self.visit(node.args)
        self._with_frame(_Frame("function", "<lambda>", _parameter_names(node.args)),
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
        qualname = self.names.resolve(node)
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
        if not isinstance(node.ctx, ast.Load) and self.names.resolve(node.value) == "sys.modules":
            self._judged.add(id(node.value))  # reported as tampering below, not as a read
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

    def _check_assignment(self, targets, value, verb):
        for target in _flatten_targets(targets):
            if isinstance(target, ast.Attribute):
                qualname = self.names.resolve(target)
                if _is_harness_name(qualname):
                    self.observe("timer_patch", target, f"{qualname} {verb}")
                self._check_precision_flag(target, target.attr, value)
                self._check_pointer_stored(target, value)
            elif isinstance(target, ast.Subscript):
                if self.names.resolve(target.value) == "sys.modules":
                    self.observe("timer_patch", target, f"sys.modules[...] {verb}")
            elif isinstance(target, ast.Name) and target.id in _SUBCLASS_HOOKS:
                self.observe("tensor_subclass", target, f"{target.id} assigned")

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
        if not self._in_host_function():
            return
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _HOST_TRANSFER_METHODS \
                and not node.args:
            self.observe("numpy_compute", node, f".{func.attr}() call in {self._where()}")
        elif qualname and _matches(qualname, _FOREIGN_COMPUTE_ROOTS):
            if qualname.startswith("math.") and qualname[5:] in _MATH_SHAPE_HELPERS:
                return
            self.observe("numpy_compute", node, f"{qualname}() call in {self._where()}")

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


def _analyse_candidate(tree, reference_stem, facts):
    names = _Names(tree)
    model_new = _last_definition(tree.body, ast.ClassDef, "ModelNew")
    if model_new is not None:
        facts["model_new_line"] = model_new.lineno
        facts["model_new_bases"] = [_unparse(b) for b in model_new.bases]
        facts["forward_line"] = _forward_line(model_new)
    kernels = _find_kernels(tree, names)
    facts["kernels"] = [k.fact() for k in kernels]
    visitor = _CandidateVisitor(names, kernels, _kernel_aliases(tree, {k.name for k in kernels}),
                                model_new, reference_stem, _module_globals(tree))
    visitor.visit(tree)
    facts["launches"] = sorted(visitor.launches, key=lambda l: (l["line"], l["kernel"]))
    facts["observations"] = _unique_sorted(visitor.observations)


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
