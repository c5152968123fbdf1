"""Candidate facts and the stage's entry point: the visitor's and the launch hooks' observations
for a file, and for code held in its strings.
"""
import ast
import os
import textwrap

from .patterns import _WELL_KNOWN_MODULES
from .parsing import TOO_DEEP, _analyse_file, _last_definition, _syntax_error, _unparse
from .reference import reference_facts
from .names import _Names
from .kernels import _find_kernels, _kernel_aliases
from .reach import _model_new_reach
from .launch_hooks import _launch_hook_observations
from .visitor import _CandidateVisitor, _module_globals


def _reference_stem(reference_path):
    if not reference_path:
        return None
    stem = os.path.splitext(os.path.basename(reference_path))[0]
    return None if not stem.isidentifier() or stem in _WELL_KNOWN_MODULES else stem


def _unique_sorted(observations):
    seen, result = set(), []
    for obs in sorted(observations, key=lambda o: (o["line"], o["kind"], o["detail"])):
        key = (obs["kind"], obs["line"], obs["detail"])
        if key not in seen:
            seen.add(key)
            result.append(obs)
    return result


def candidate_facts(path, reference_stem=None):
    facts = {"syntax_error": None, "model_new_line": None, "forward_line": None,
             "model_new_bases": [], "kernels": [], "launches": [], "observations": []}
    if not _analyse_file(path, facts,
                         lambda tree: _analyse_candidate(tree, reference_stem, facts)):
        return dict(facts, syntax_error=_syntax_error(TOO_DEEP), kernels=[], launches=[],
                    observations=[])
    return facts


_MAX_CODE_IN_STRINGS_DEPTH = 2
_MAX_CODE_IN_STRING = 200000  # characters: a longer string is not parsed


def _code_in_string_observations(text, depth):
    """The observations of Python code held in a string (written to a file and imported, or
    run by compile/exec): a string that parses as a module with a statement other than a bare
    expression (prose does not), on one line only an import (`"x=y"` is a setting, not code).
    The string is parsed, never run."""
    if len(text) > _MAX_CODE_IN_STRING or len(text.strip()) < 6:
        return []
    try:
        tree = ast.parse(textwrap.dedent(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    code = (ast.Import, ast.ImportFrom) if "\n" not in text.strip() else ast.stmt
    if not any(isinstance(stmt, code) and not isinstance(stmt, ast.Expr) for stmt in tree.body):
        return []
    facts = {"observations": []}
    _analyse_candidate(tree, None, facts, depth)
    return facts["observations"]


def _analyse_candidate(tree, reference_stem, facts, depth=0):
    names = _Names(tree)
    model_new = _last_definition(tree.body, ast.ClassDef, "ModelNew")
    if model_new is not None:
        facts["model_new_line"] = model_new.lineno
        facts["model_new_bases"] = [_unparse(b) for b in model_new.bases]
        facts["forward_line"] = _forward_line(model_new)
    kernels = _find_kernels(tree, names)
    facts["kernels"] = [k.fact() for k in kernels]
    visitor = _CandidateVisitor(names, kernels, _kernel_aliases(tree, {k.name for k in kernels}),
                                model_new, reference_stem, _module_globals(tree),
                                _model_new_reach(tree, model_new, names), depth,
                                code_in_string=(_code_in_string_observations
                                                if depth < _MAX_CODE_IN_STRINGS_DEPTH else None))
    visitor.visit(tree)
    facts["launches"] = sorted(visitor.launches,
                               key=lambda launch: (launch["line"], launch["kernel"]))
    facts["observations"] = _unique_sorted(
        visitor.observations + _launch_hook_observations(tree, names, kernels))


def _forward_line(model_new):
    line = None
    for stmt in model_new.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == "forward":
            line = stmt.lineno
        elif isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "forward" for t in stmt.targets):
            line = stmt.lineno  # `forward = other_function`
    return line


def run(job, channel=None):
    """The static stage's facts (docs/WORKER_PROTOCOL.md). `channel` is unused: the caller
    writes the returned facts; no phases are reported for a stage that runs no user code."""
    del channel
    reference_path = job.get("reference_path")
    candidate_path = job.get("candidate_path")
    return {
        "reference": reference_facts(reference_path) if reference_path else None,
        "candidate": (candidate_facts(candidate_path, _reference_stem(reference_path))
                      if candidate_path else None),
    }
