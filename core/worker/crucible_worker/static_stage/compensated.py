"""Compensated products (3xTF32, bf16x3): dots and splits that keep more than one pass's
accuracy, so they are not a precision downgrade.
"""
import ast

from .statements import _is_constant

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
