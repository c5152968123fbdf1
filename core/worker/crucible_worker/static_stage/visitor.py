"""The candidate visitor: every observation the static stage makes about candidate code.
"""
import ast
import os

from .patterns import (_AUTOCAST, _BYTE_BUILTINS, _BYTE_VIEWS, _CACHE_LOOKUP_METHODS,
                       _CAST_FUNCTIONS, _CAST_METHODS, _COMPUTED_NAME_OWNERS,
                       _DISPATCH_MODE_LEAVES, _DTYPE_KEYWORDS, _DYNAMIC_CODE_BUILTINS,
                       _HOST_TRANSFER_METHODS, _IMPORT_FUNCTIONS, _INTROSPECTION,
                       _INTROSPECTION_ATTRS, _IN_MEMORY_FILES, _ITERATING_BUILTINS, _LIST_MUTATORS,
                       _MATH_SHAPE_HELPERS, _MEMBER_FUNCTIONS, _MEMO_DECORATORS, _METADATA_ATTRS,
                       _MODULE_BASES, _NUMPY_METADATA, _NUMPY_SCALARS, _NUMPY_VIEW_METHODS,
                       _PRIVATE_FRAME_NAMESPACES, _PROCESS_OR_NETWORK, _PROCESS_PREFIXES,
                       _RAW_BYTES_ATTRS, _RAW_BYTES_MODULES, _REDUCED_PRECISION_FLAGS,
                       _REPORTED_IMPORTS, _SIZE_BUILTINS, _SIZE_METHODS, _STORAGE_METHODS,
                       _SUBCLASS_FACTORIES, _SUBCLASS_HOOKS, _SYS_MODULES_MUTATORS, _TENSOR_BASES,
                       _THREADING, _TORCH_INTERNAL_ATTRS, _WATCHED_NAMESPACES,
                       _built_from_literals, _is_harness_name, _is_numpy_name, _is_numpy_view,
                       _is_torch_internal, _matches, _method, _sensitive_string_kind)
from .parsing import _module_level_statements, _unparse
from .names import _chain_root, _import_target
from .statements import (_Frame, _cache_key_kind, _catches_only_import_errors, _flatten_targets,
                         _is_constant, _is_low_precision_dtype, _only_imports, _only_reraises)
from .reach import _local_cache_keys, _own_nodes, _parameter_names
from .launch_hooks import _EXTRACTING_METHODS
from .compensated import _compensated_products, _compensated_splits

class _CandidateVisitor(ast.NodeVisitor):
    """Walks the candidate once, collecting launch sites and observations.

    "Reachable from ModelNew" is approximated as: any function or class body that is not a
    Triton kernel (kernels cannot hold Python fallbacks, caches or host calls anyway).
    """

    def __init__(self, names, kernels, kernel_aliases, model_new, reference_stem,
                 module_globals, reach=None, depth=0, code_in_string=None):
        self.names = names
        self.depth = depth  # how deep in code held in strings this file is
        # (text, depth) -> the observations of code held in a string, analysed as a candidate of
        # its own by the analysis that made this visitor; None: strings are not looked into
        self.code_in_string = code_in_string
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
        if isinstance(node.value, str) and self.code_in_string is not None:
            for obs in self.code_in_string(node.value, self.depth + 1):
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
