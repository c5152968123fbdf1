"""What ModelNew reaches: the functions and module statements its forward can run.
"""
import ast

from .patterns import _matches
from .parsing import _module_level_statements
from .kernels import _decorator_kind
from .statements import _cache_key_kind, _flatten_targets


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
