"""Reading and parsing a file: bytes decoded as Python would, syntax errors with their line, and
the statements that run when the module is imported.
"""
import ast
import contextlib
import io
import sys
import tokenize

from .patterns import _ANALYSIS_RECURSION_LIMIT


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


TOO_DEEP = "the code is nested too deeply to analyse"


def _analyse_file(path, facts, analyse):
    """Parses `path` and runs `analyse` on the part that runs at import, with the walk's head
    room. A file that does not parse gets its `syntax_error` in `facts`. False when the file
    parsed but nests too deeply to analyse."""
    tree, error = _parse_file(path)
    if error:
        facts["syntax_error"] = error
        return True
    with _recursion_head_room():
        try:
            analyse(_imported_part(tree))
        except RecursionError:
            return False
    return True
