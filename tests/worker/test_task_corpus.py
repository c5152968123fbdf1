"""The bundled task corpus (resources/tasks/): every task in index.json is a valid, non-degenerate
KernelBench-format reference that runs quickly on a CPU.

Per task: the file exists and matches its entry; it imports; Model builds under a seed and runs
forward on get_inputs() under no_grad; the outputs are finite; the same seeds give identical
outputs and another input seed gives different ones; the outputs pass METR's degeneracy gates
(the ones Crucible's judge applies: not more than 70% of values within 1e-4 of zero, not more than
70% within 1e-4 of their mean, not more than 95% within 1e-4 of another seed's output); a task
with a batch constant still runs with batch + 1 and every output's leading dimension changes (what
the reference stage's alternative-batch check needs); and the eager median time is measured
(reported with -s, failing only above HARD_LIMIT_S so a loaded machine does not fail it).
"""
import importlib.util
import json
import math
import os
import re
import statistics
import time

import pytest
import torch

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TASKS_DIR = os.path.join(REPO, "resources", "tasks")
INDEX_PATH = os.path.join(TASKS_DIR, "index.json")

MIN_TASKS = {1: 95, 2: 50, 3: 12}
BATCH_NAMES = ("batch_size", "batch", "B")  # as the reference stage looks them up
ATOL = 1e-4
NEAR_FRACTION = 0.7
ACROSS_SEEDS_FRACTION = 0.95
MODEL_SEED = 42
TARGET_S = 0.5     # what the corpus aims for; over it is reported, not failed
HARD_LIMIT_S = 2.0  # fails only above this
TIMING_REPS = 5


def _load_index():
    with open(INDEX_PATH) as fh:
        return json.load(fh)


INDEX = _load_index()


# ---------------------------------------------------------------------------------------------
# Helpers


def _import_task(rel_path):
    path = os.path.join(TASKS_DIR, rel_path)
    name = "crucible_task_" + re.sub(r"\W", "_", rel_path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build(module, seed=MODEL_SEED):
    torch.manual_seed(seed)
    init = module.get_init_inputs()
    if isinstance(init, dict):
        return module.Model(**init)
    if len(init) == 2 and isinstance(init[0], list) and isinstance(init[1], dict):
        return module.Model(*init[0], **init[1])
    return module.Model(*init)


def _inputs(module, seed):
    torch.manual_seed(seed)
    inputs = module.get_inputs()
    assert isinstance(inputs, (list, tuple)), "get_inputs() must return a list"
    return list(inputs)


def _clone(inputs):
    return [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]


def _run(model, inputs):
    with torch.no_grad():
        return _tensors(model(*_clone(inputs)))


def _tensors(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _tensors(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in _tensors(item)]
    return []


def _batch_name(module):
    for name in BATCH_NAMES:
        value = getattr(module, name, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return name
    return None


def _degeneracy(outputs_a, outputs_b):
    """(near-zero, near-mean, equal-across-seeds) fractions over floating outputs, counted the way
    core/verify/compare.cpp's assessDegeneracy counts them."""
    total = near_zero = near_mean = 0
    across_total = across_same = 0
    for a, b in zip(outputs_a, outputs_b):
        if a.numel() == 0:
            continue
        if a.is_floating_point():
            x = a.double()
            near_zero += int((x.abs() <= ATOL).sum())
            near_mean += int(((x - x.mean()).abs() <= ATOL).sum())
            total += x.numel()
        if a.shape == b.shape:
            across_same += int(((a.double() - b.double()).abs() <= ATOL).sum())
            across_total += a.numel()
    return (near_zero / total if total else 0.0, near_mean / total if total else 0.0,
            across_same / across_total if across_total else 0.0)


# ---------------------------------------------------------------------------------------------
# The index as a whole


def test_index_covers_every_task_file():
    files = [entry["file"] for entry in INDEX]
    assert len(files) == len(set(files)), "duplicate files in index.json"
    on_disk = set()
    for level in MIN_TASKS:
        level_dir = os.path.join(TASKS_DIR, f"level{level}")
        on_disk |= {f"level{level}/{f}" for f in os.listdir(level_dir) if f.endswith(".py")}
    assert on_disk == set(files), (f"not in index.json: {sorted(on_disk - set(files))}; "
                                   f"missing on disk: {sorted(set(files) - on_disk)}")


def test_each_level_has_enough_tasks_numbered_from_one():
    for level, minimum in MIN_TASKS.items():
        ids = sorted(int(os.path.basename(e["file"]).split("_", 1)[0])
                     for e in INDEX if e["level"] == level)
        assert len(ids) >= minimum, f"level {level}: {len(ids)} tasks, want at least {minimum}"
        assert ids == list(range(1, len(ids) + 1)), f"level {level}: ids {ids} are not 1..n"


# ---------------------------------------------------------------------------------------------
# Each task


@pytest.mark.parametrize("entry", INDEX, ids=[e["file"] for e in INDEX])
def test_task(entry):
    # The entry and the file agree.
    assert set(entry) >= {"file", "name", "level", "ops", "description"}
    level, rel_path = entry["level"], entry["file"]
    match = re.fullmatch(r"level(\d)/(\d+)_(\w+)\.py", rel_path)
    assert match, f"{rel_path} is not named level<L>/<id>_<Name>.py"
    assert int(match.group(1)) == level
    assert match.group(3) == entry["name"]
    assert isinstance(entry["ops"], list) and entry["ops"]
    # torch / torch.nn.functional names, lower snake case ("conv2d", "layer_norm", "softmax").
    assert all(isinstance(op, str) and re.fullmatch(r"[a-z][a-z0-9_]*", op) for op in entry["ops"])
    assert len(set(entry["ops"])) == len(entry["ops"]), "an op is listed twice"
    assert isinstance(entry["description"], str) and entry["description"]
    assert os.path.isfile(os.path.join(TASKS_DIR, rel_path))

    module = _import_task(rel_path)
    for name in ("Model", "get_inputs", "get_init_inputs"):
        assert callable(getattr(module, name, None)), f"{rel_path} does not define {name}"
    assert (module.Model.__doc__ or "").strip(), "Model has no docstring"

    # Runs, finite.
    model = _build(module)
    assert isinstance(model, torch.nn.Module)
    inputs = _inputs(module, 1)
    assert all(x.device.type == "cpu" for x in inputs if isinstance(x, torch.Tensor))
    outputs = _run(model, inputs)
    assert outputs, "forward returned no tensors"
    for i, out in enumerate(outputs):
        if out.is_floating_point():
            assert torch.isfinite(out).all(), f"output {i} has NaN or Inf"

    # Deterministic: the same seeds give identical outputs (a fresh model and fresh inputs).
    again = _run(_build(module), _inputs(module, 1))
    assert len(again) == len(outputs)
    for i, (a, b) in enumerate(zip(outputs, again)):
        assert a.shape == b.shape and torch.equal(a, b), f"output {i} differs under the same seed"

    # Input-sensitive and not degenerate.
    other = _run(model, _inputs(module, 2))
    assert any(not torch.equal(a, b) for a, b in zip(outputs, other)), \
        "another input seed gives the same outputs"
    near_zero, near_mean, across = _degeneracy(outputs, other)
    assert near_zero <= NEAR_FRACTION, f"{near_zero:.0%} of outputs within {ATOL} of zero"
    assert near_mean <= NEAR_FRACTION, f"{near_mean:.0%} of outputs within {ATOL} of their mean"
    assert across <= ACROSS_SEEDS_FRACTION, \
        f"{across:.0%} of outputs unchanged under another input seed"

    # Alternative batch size, the way the reference stage tries it.
    batch_name = _batch_name(module)
    if batch_name is not None:
        value = getattr(module, batch_name)
        alt = 3 if value == 1 else value + 1
        setattr(module, batch_name, alt)
        try:
            alt_outputs = _run(model, _inputs(module, 3))
        finally:
            setattr(module, batch_name, value)
        assert len(alt_outputs) == len(outputs)
        for i, (a, b) in enumerate(zip(outputs, alt_outputs)):
            assert a.dim() > 0, f"output {i} is a scalar, so {batch_name} cannot be checked"
            assert b.shape[0] != a.shape[0], \
                f"output {i}'s leading dimension stayed {a.shape[0]} with {batch_name} = {alt}"
            if b.is_floating_point():
                assert torch.isfinite(b).all()

    # Eager time: median of a few calls after a warm-up.
    with torch.no_grad():
        model(*_clone(inputs))
        samples = []
        for _ in range(TIMING_REPS):
            args = _clone(inputs)
            start = time.perf_counter()
            model(*args)
            samples.append(time.perf_counter() - start)
    median_s = statistics.median(samples)
    note = "" if median_s <= TARGET_S else f" (over the {TARGET_S} s target)"
    n_out = sum(t.numel() for t in outputs)
    print(f"\n{rel_path}: eager median {median_s * 1e3:.2f} ms, {n_out} output elements{note}")
    assert median_s <= HARD_LIMIT_S, f"eager median {median_s:.2f} s is over {HARD_LIMIT_S} s"
    assert math.isfinite(median_s)
