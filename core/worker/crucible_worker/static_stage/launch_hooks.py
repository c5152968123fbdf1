"""Launch hooks: Python that Triton runs inside a launch (heuristics, autotuner hooks), where
host compute hides from the launch count.
"""
import ast

from .patterns import (_HOST_TRANSFER_METHODS, _METADATA_ATTRS, _NUMPY_ROOTS, _NUMPY_VIEW_METHODS,
                       _matches, _method)
from .parsing import _module_level_statements, _unparse
from .reference import _assignment_pairs
from .kernels import _triton_decorator
from .statements import _flatten_targets, _is_constant
from .reach import _parameter_names, _statement_names

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
