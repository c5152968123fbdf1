"""Triton kernels and their launch sites in the candidate.
"""
import ast


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
