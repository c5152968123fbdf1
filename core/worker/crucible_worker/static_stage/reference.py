"""Facts about the reference file: its entry points and module-level constants.
"""
import ast

from .parsing import TOO_DEEP, _analyse_file, _last_definition, _syntax_error


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
    if not _analyse_file(path, facts, lambda tree: _analyse_reference(tree.body, facts)):
        facts["syntax_error"] = _syntax_error(TOO_DEEP)
    return facts


def _analyse_reference(body, facts):
    model = _last_definition(body, ast.ClassDef, "Model")
    facts["model_line"] = model.lineno if model else None
    for key, name in (("get_inputs_line", "get_inputs"),
                      ("get_init_inputs_line", "get_init_inputs")):
        found = _last_definition(body, (ast.FunctionDef, ast.AsyncFunctionDef), name)
        facts[key] = found.lineno if found else None
    facts["constants"] = _module_constants(body)
