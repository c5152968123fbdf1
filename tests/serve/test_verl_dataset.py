"""`crucible tasks export --format verl`: verl's parquet rows from a task folder (prompt
messages, the reference as ground truth, operators in extra_info, fewer operators first), and a
row scored through the reward function against a live service."""
import json
import os
import subprocess
import sys

import pyarrow.parquet as pq

from conftest import CRUCIBLE, REFERENCE, candidate

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "integrations", "verl"))
from crucible_reward import Settings, compute_score  # noqa: E402


def task_folder(tmp_path):
    folder = tmp_path / "tasks"
    folder.mkdir()
    entries = []
    for k, ops in enumerate([["relu", "add", "mul"], ["relu"], ["relu", "add"]], start=1):
        name = f"{k}_Relu{len(ops)}.py"
        (folder / name).write_text(REFERENCE)
        entries.append({"file": name, "name": f"Relu{len(ops)}", "level": "synth", "ops": ops})
    (folder / "index.json").write_text(json.dumps(entries))
    return folder


def test_rows_are_verls_and_ordered_by_operator_count(tmp_path, serve):
    out = tmp_path / "dataset"
    done = subprocess.run([CRUCIBLE, "tasks", "export", str(out), "--format", "verl", "--dir",
                           str(task_folder(tmp_path)), "--backend", "opencl",
                           "--test-fraction", "0.34"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "2 train and 1 test rows from 3 tasks" in done.stdout
    train = pq.read_table(out / "train.parquet").to_pylist()
    test = pq.read_table(out / "test.parquet").to_pylist()
    assert [r["extra_info"]["op_count"] for r in train + test] == [1, 2, 3]
    row = train[0]
    assert row["data_source"] == "crucible" and row["ability"] == "triton_kernel"
    assert [m["role"] for m in row["prompt"]][-1] == "user"
    assert "class Model" in row["prompt"][-1]["content"]
    assert row["reward_model"] == {"style": "rule", "ground_truth": REFERENCE}
    assert row["extra_info"]["ops"] == ["relu"] and row["extra_info"]["split"] == "train"
    assert test[0]["extra_info"]["split"] == "test" and test[0]["extra_info"]["index"] == 0
    # The row as verl hands it to the reward function.
    service = serve("--lanes", "cpu")
    scored = compute_score(row["data_source"], "```python\n" + candidate() + "```",
                           row["reward_model"]["ground_truth"], row["extra_info"],
                           settings=Settings(url=f"http://127.0.0.1:{service.port}", trials=2))
    assert scored["verified"] == 1.0 and scored["score"] > 1.0


def test_bad_usage_is_named(tmp_path):
    for args, words in [([], "expected the output folder"),
                        ([str(tmp_path / "x")], "--format verl"),
                        ([str(tmp_path / "x"), "--format", "verl", "--dir", str(tmp_path)],
                         "no tasks")]:
        done = subprocess.run([CRUCIBLE, "tasks", "export", *args], capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 2 and words in done.stderr, (args, done.stderr)
