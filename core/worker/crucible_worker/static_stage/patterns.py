"""What the observations look for: the names, modules and attributes behind each observation
kind, and the predicates that match them.
"""
import ast
import sys

# Analysis recursion limit. Files are parsed under the interpreter's normal limit (a file Python
# cannot parse that way cannot be imported either); walking a tree that did parse recurses a few
# Python frames per level, so the walk gets more head room.
_ANALYSIS_RECURSION_LIMIT = 20000

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
