"""`crucible serve --ray ADDRESS`: each lane a Ray actor (integrations/ray/crucible_ray/lane.py)
on a local multi-node Ray cluster on this machine: the two lanes land on different nodes, and
a batch spread over them is judged as on local lanes. Runs with .venv-verl's python (ray)."""
import sys

import pytest
from ray.cluster_utils import Cluster

from conftest import request


@pytest.fixture
def cluster(monkeypatch):
    # The head schedules nothing; each worker node has room for one lane.
    made = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    for _ in range(2):
        made.add_node(num_cpus=1)
    made.wait_for_nodes()
    monkeypatch.setenv("CRUCIBLE_RAY_PYTHON", sys.executable)  # the venv's, not its target
    yield made
    made.shutdown()


def test_lanes_run_as_actors_on_separate_nodes(serve, cluster):
    service = serve("--lanes", "cpu,cpu:1", "--ray", cluster.address)
    def started(health):
        down = [lane["last_error"] for lane in health["lanes"] if lane["state"] == "down"]
        assert not down, down
        return health["lanes"] if all(lane["state"] == "idle" for lane in health["lanes"]) \
            else None

    lanes = service.wait_for(started, "both Ray lanes to start", limit_s=180)
    nodes = {lane["node"] for lane in lanes}
    assert len(nodes) == 2 and "" not in nodes, lanes
    status, batch, _ = service.call("POST", "/evaluate/batch", {
        "requests": [request(f"ray-{k}") for k in range(4)]})
    assert status == 200
    assert [r["verdict"] for r in batch["results"]] == ["verified"] * 4
    lanes_used = {service.call("GET", f"/status/ray-{k}")[1]["lane"] for k in range(4)}
    assert lanes_used == {"cpu", "cpu:1"}


def test_a_bench_spreads_its_verifications_over_the_cluster(cluster, tmp_path):
    import json
    import sqlite3
    import subprocess

    from conftest import CRUCIBLE, REFERENCE
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for k in (1, 2, 3):
        (tasks / f"{k}_Relu.py").write_text(REFERENCE)
    done = subprocess.run([CRUCIBLE, "bench", str(tasks), "--cluster", cluster.address,
                           "--jobs", "2", "--backend", "opencl", "--trials", "2", "--no-db",
                           "--no-compile-baseline", "--json"],
                          capture_output=True, text=True, timeout=600,
                          env=dict(__import__("os").environ, TMPDIR=str(tmp_path)))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["tasks_total"] == 3 and report["tasks_correct"] == 3
    assert "verifying on 2 Ray lane(s)" in done.stderr
    # The run's jobs: spread over both lanes, which the cluster (one CPU per node, none on the
    # head) had to place on two nodes.
    (db,) = tmp_path.glob("crucible-cluster-*.db")
    lanes = {row[0] for row in sqlite3.connect(db).execute("SELECT lane FROM service_jobs")}
    assert lanes == {"cpu", "cpu:1"}
