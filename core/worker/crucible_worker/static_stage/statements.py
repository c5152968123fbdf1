"""Shapes of statements the candidate visitor judges: re-raising handlers, import guards, dtype
and shape constants, cache keys, assignment targets.
"""
import ast

from .patterns import _DTYPE_NAMESPACES, _IMPORT_ERRORS, _LOW_PRECISION_LEAVES


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


def _flatten_targets(targets):
    for target in targets:
        if isinstance(target, (ast.Tuple, ast.List)):
            yield from _flatten_targets(target.elts)
        elif isinstance(target, ast.Starred):
            yield from _flatten_targets([target.value])
        else:
            yield target
