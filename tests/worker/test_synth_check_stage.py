"""The synthcheck stage and `crucible tasks synth` end to end (label worker).

The stage is called in-process on small hand-written tasks; the CLI (CRUCIBLE_BIN) synthesizes a
few tasks twice to check they run, that one seed gives the same bytes and another seed other
tasks, and that index.json describes the files.
"""
import json
import os
import subprocess

import pytest
import torch

from crucible_worker import loader, synth_check_stage, value_pack

GOOD = """\
import torch
import torch.nn as nn
import torch.nn.functional as F

x0_shape = (4, 8)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear_1 = nn.Linear(8, 6)

    def forward(self, x0):
        t1 = self.linear_1(x0)
        t2 = torch.argmax(t1, dim=-1, keepdim=False)
        return t1, t2


def get_inputs():
    return [torch.randn(x0_shape)]


def get_init_inputs():
    return []
"""

BROKEN = """\
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x0):
        return torch.matmul(x0, x0)


def get_inputs():
    return [torch.randn(3, 4)]


def get_init_inputs():
    return []
"""


class Channel:
    def __init__(self):
        self.phases = []

    def phase(self, name):
        self.phases.append(name)


def test_stage_saves_each_output_of_each_trial(tmp_path):
    good = tmp_path / "good.py"
    good.write_text(GOOD)
    broken = tmp_path / "broken.py"
    broken.write_text(BROKEN)
    job = {"seed": 3, "trials": 2, "threads": 1,
           "tasks": [{"path": str(good), "out_dir": str(tmp_path / "g")},
                     {"path": str(broken), "out_dir": str(tmp_path / "b")}]}
    channel = Channel()
    facts = synth_check_stage.run(job, channel)
    assert channel.phases == ["task-0", "task-1"]
    first, second = facts["tasks"]
    assert first["error"] is None
    assert first["outputs"] == [{"dtype": "float32", "shape": [4, 6]},
                                {"dtype": "int64", "shape": [4]}]
    assert first["ms"] >= 0
    packs = {(j, k): value_pack.load(str(tmp_path / "g" / f"out{j}_{k}.ctp"))
             for j in range(2) for k in range(2)}
    # Trial k draws its inputs under seed + 1 + k, the model under seed.
    loader.seed_all(3)
    linear = torch.nn.Linear(8, 6)
    loader.seed_all(3 + 1 + 1)
    x = torch.randn(4, 8)
    with torch.no_grad():
        torch.testing.assert_close(packs[(0, 1)], linear(x))
    assert not torch.equal(packs[(0, 0)], packs[(0, 1)])
    assert packs[(1, 0)].dtype == torch.int64
    # The broken task's error names its line in its own file.
    assert second["error"]["line"] == 7
    assert "mat1 and mat2" in second["error"]["message"] or "shapes" in second["error"]["message"]


def _binary():
    binary = os.environ.get("CRUCIBLE_BIN")
    if not binary:
        pytest.skip("CRUCIBLE_BIN is not set (run through ctest)")
    return binary


def _synth(tmp_path, name, seed):
    binary = _binary()
    out = tmp_path / name
    done = subprocess.run([binary, "tasks", "synth", "--ops", "3", "--count", "3", "--seed",
                           str(seed), "--out", str(out), "--json"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return out, json.loads(done.stdout)


def _files(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_synthesized_tasks_run_and_one_seed_gives_the_same_bytes(tmp_path):
    first, report = _synth(tmp_path, "a", 11)
    again, _ = _synth(tmp_path, "b", 11)
    other, _ = _synth(tmp_path, "c", 12)
    assert _files(first) == _files(again)
    assert _files(first) != _files(other)

    index = json.loads((first / "index.json").read_text())
    assert [e["file"] for e in index] == sorted(p.name for p in first.glob("*.py"))
    assert len(index) == 3 and len(report["tasks"]) == 3
    assert sum(report["coverage"].values()) == 9  # 3 tasks of 3 operators
    assert set(report["unused"]) == {op for op, n in report["coverage"].items() if n == 0}
    for entry in index:
        assert entry["level"] == "synth" and entry["compute_nodes"] == 3 and entry["ops"]
        # Each file runs here too, with finite outputs.
        module = loader.import_file(str(first / entry["file"]), "synth_" + entry["name"])
        model = loader.build_model(module.Model, module.get_init_inputs(), 0, "cpu")
        with torch.no_grad():
            outputs = model(*module.get_inputs())
        for t in value_pack.tensors_in(outputs):
            assert torch.isfinite(t.double()).all()


@pytest.mark.parametrize("args, message", [
    (["--count", "2", "--out", "X"], "needs --ops"),
    (["--ops", "0", "--count", "2", "--out", "X"], "--ops needs a whole number >= 1"),
    (["--ops", "2", "--count", "two", "--out", "X"], "--count needs a whole number"),
    (["--ops", "2", "--count", "2"], "needs --out"),
    (["--ops", "2", "--count", "2", "--out", "X", "--bogus", "1"], "unknown option '--bogus'"),
    (["--ops", "2", "--count", "2", "--out", "X", "--min-flops", "9", "--max-flops", "8"],
     "min-flops"),
])
def test_bad_flags_exit_2_with_a_message_naming_the_flag(tmp_path, args, message):
    binary = _binary()
    args = [str(tmp_path / "out") if a == "X" else a for a in args]
    done = subprocess.run([binary, "tasks", "synth", *args], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert message in done.stderr
    assert not (tmp_path / "out" / "index.json").exists()


def test_a_non_empty_folder_needs_force(tmp_path):
    binary = _binary()
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    base = [binary, "tasks", "synth", "--ops", "2", "--count", "2", "--out", str(out),
            "--no-check"]
    refused = subprocess.run(base, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "--force" in refused.stderr
    forced = subprocess.run(base + ["--force"], capture_output=True, text=True, timeout=60)
    assert forced.returncode == 0, forced.stderr
    assert (out / "keep.txt").read_text() == "mine"
    assert len(json.loads((out / "index.json").read_text())) == 2


def test_tasks_list_reads_the_bundled_corpus():
    binary = _binary()
    done = subprocess.run([binary, "tasks", "list", "--json"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    with open(os.path.join(repo, "resources", "tasks", "index.json")) as f:
        assert json.loads(done.stdout) == json.load(f)
