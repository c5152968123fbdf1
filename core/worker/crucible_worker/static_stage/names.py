"""Name resolution: import aliases, dotted chains and names built from string literals, folded
to the fully qualified names the patterns match.
"""
import ast
import base64
import binascii
import codecs

from .patterns import _CONVENTIONAL_ALIASES
from .reference import _assignment_pairs


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
