"""`crucible serve` driven over HTTP on loopback: evaluations, idempotent ids, concurrent
requests, a full queue, a lane killed mid-job, a restart with jobs queued, bad requests and the
token rule (docs/SERVE.md)."""
import os
import signal
import sqlite3
import subprocess
import threading

from conftest import CRUCIBLE, REFERENCE, request


def lane_busy_with(job_id):
    return lambda h: next((lane for lane in h["lanes"]
                           if lane["job"] == job_id and lane["pid"]), None)


def test_an_evaluation_answers_as_verify_does_and_an_id_is_idempotent(serve):
    service = serve("--lanes", "cpu")
    status, body, _ = service.call("POST", "/evaluate", request("relu-1"))
    assert status == 200, body
    assert body["task_id"] == "relu-1" and body["status"] == "completed"
    assert body["verdict"] == "verified" and body["correct"] is True
    assert body["speedup"] > 0 and body["reward"]["preset"] == "tritonrl"
    # The same id and request: the stored result, not a second run.
    again = service.call("POST", "/evaluate", request("relu-1"))[1]
    assert again == body
    assert service.call("GET", "/results/relu-1")[1] == body
    status, job, _ = service.call("GET", "/status/relu-1")
    assert status == 200 and job["status"] == "done" and job["attempts"] == 1
    # The same id with another request is refused.
    status, conflict, _ = service.call("POST", "/evaluate", request("relu-1", trials=3))
    assert status == 409 and "another request" in conflict["error"]
    # Kept as a verification session too, for the workbench.
    db = sqlite3.connect(service.db)
    assert db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 1
    assert db.execute("SELECT state FROM service_jobs WHERE id = 'relu-1'").fetchone()[0] == "done"


def test_concurrent_requests_are_all_answered(serve):
    service = serve("--lanes", "cpu")
    answers = {}

    def ask(k):
        answers[k] = service.call("POST", "/evaluate", request(f"many-{k}"))

    threads = [threading.Thread(target=ask, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(answers) == [0, 1, 2, 3]
    for k, (status, body, _) in answers.items():
        assert status == 200 and body["task_id"] == f"many-{k}" and body["verdict"] == "verified"
    assert service.health()["jobs"] == {"done": 4, "queued": 0, "running": 0}
    status, batch, _ = service.call("POST", "/evaluate/batch", {"requests": [
        request("many-0"), request("batch-new"), {"task_id": "bad"}]})
    assert status == 200
    first, second, third = batch["results"]
    assert first == answers[0][1] and second["verdict"] == "verified"
    assert third["status"] == "rejected" and third["code"] == 400


def test_a_full_queue_answers_429_with_retry_after(serve):
    service = serve("--lanes", "cpu", "--queue", "1")
    assert service.call("POST", "/evaluate?wait=0", request("slow", pause_s=6))[0] == 202
    service.wait_for(lane_busy_with("slow"), "the lane to take the slow job")
    assert service.call("POST", "/evaluate?wait=0", request("second"))[0] == 202
    status, body, headers = service.call("POST", "/evaluate?wait=0", request("third"))
    assert status == 429 and "queue is full" in body["error"]
    assert headers.get("Retry-After") == "5"
    assert service.health()["queue"] == {"depth": 1, "capacity": 1}
    assert service.call("GET", "/status/third")[0] == 404  # refused: nothing kept


def test_a_lane_killed_mid_job_loses_nothing_and_twice_is_an_infrastructure_error(serve):
    service = serve("--lanes", "cpu")
    # Killed once: the job runs again on a fresh lane and gets its verdict.
    assert service.call("POST", "/evaluate?wait=0", request("once", pause_s=4))[0] == 202
    lane = service.wait_for(lane_busy_with("once"), "the lane to take the job")
    os.killpg(lane["pid"], signal.SIGKILL)
    status, body, _ = service.call("POST", "/evaluate", request("once", pause_s=4))
    assert status == 200 and body["status"] == "completed" and body["verdict"] == "verified"
    assert service.call("GET", "/status/once")[1]["attempts"] == 2
    # Killed on both attempts: reported as the infrastructure's failure, never as a verdict.
    assert service.call("POST", "/evaluate?wait=0", request("twice", pause_s=4))[0] == 202
    killed = set()
    for attempt in (1, 2):
        def fresh_lane(h):
            lane = lane_busy_with("twice")(h)
            return lane if lane and lane["pid"] not in killed else None
        lane = service.wait_for(fresh_lane, f"attempt {attempt} to start")
        os.killpg(lane["pid"], signal.SIGKILL)
        killed.add(lane["pid"])
    status, body, _ = service.call("POST", "/evaluate", request("twice", pause_s=4))
    assert status == 200 and body["status"] == "failed"
    assert body["error"]["blame"] == "infrastructure" and "died" in body["error"]["message"]
    assert body["verdict"] == "error" and body["correct"] is False
    health = service.health()
    assert health["lanes"][0]["starts"] >= 3


def test_a_restart_runs_the_jobs_it_had_accepted(serve, tmp_path):
    first = serve("--lanes", "cpu")
    assert first.call("POST", "/evaluate?wait=0", request("before-a", pause_s=3))[0] == 202
    assert first.call("POST", "/evaluate?wait=0", request("before-b"))[0] == 202
    first.wait_for(lane_busy_with("before-a"), "the first job to start")
    first.stop()
    db = sqlite3.connect(first.db)
    left = dict(db.execute("SELECT id, state FROM service_jobs").fetchall())
    assert left == {"before-a": "queued", "before-b": "queued"}
    db.close()
    second = serve("--lanes", "cpu", db=first.db)
    for job in ("before-a", "before-b"):
        status, body, _ = second.call("POST", "/evaluate", request(
            job, pause_s=3 if job == "before-a" else 0))
        assert status == 200 and body["verdict"] == "verified", body


def test_bad_requests_get_clear_4xx_answers(serve):
    service = serve("--lanes", "cpu", "--max-wait", "1")
    cases = [
        ("POST", "/evaluate", b"{not json", 400, "not valid JSON"),
        ("POST", "/evaluate", b'{"kernel_code": "x"}', 400, "missing field 'reference_code'"),
        ("POST", "/evaluate", b'{"reference_code": "x", "kernel_code": "y", "colour": 1}', 400,
         "unknown field 'colour'"),
        ("POST", "/evaluate", b'{"reference_code": "x", "kernel_code": "y", "trials": 0}', 400,
         "'trials' must be between"),
        ("POST", "/evaluate", b'{"reference_code": "x", "kernel_code": "y", "backend": "cuda"}',
         400, "no lane"),
        ("POST", "/evaluate", b'{"reference_code": "x", "kernel_code": "y", "task_id": "a b"}',
         400, "task_id"),
        ("POST", "/evaluate", ('{"reference_code": "' + "x" * 300_000 + '", "kernel_code": "y"}'
                               ).encode(), 413, "at most"),
        ("GET", "/evaluate", None, 405, "not allowed"),
        ("GET", "/nowhere", None, 404, "no such endpoint"),
        ("GET", "/results/unknown", None, 404, "no job"),
    ]
    for method, path, raw, status, words in cases:
        got, body, _ = service.call(method, path, raw=raw)
        assert (got, words in body["error"]) == (status, True), (path, raw[:80] if raw else raw,
                                                                 got, body)
    # A reference that does not parse is the caller's error: no verdict, blamed on the user.
    # (--max-wait 1: the connection is answered with the status first, then the result is read.)
    status, body, _ = service.call("POST", "/evaluate", {
        "task_id": "broken", "reference_code": "def (", "kernel_code": "y"})
    assert status == 202 and body["task_id"] == "broken"
    service.wait_for(lambda h: h["jobs"]["done"] == 1, "the broken reference's job")
    status, body, _ = service.call("GET", "/results/broken")
    assert status == 200 and body["verdict"] is None and body["error"]["blame"] == "user"
    assert body["status"] == "completed" and "reference" in body["error"]["message"]


def test_another_address_than_loopback_needs_a_token(serve):
    refused = subprocess.run([CRUCIBLE, "serve", "--host", "0.0.0.0", "--port", "0"],
                             capture_output=True, text=True, timeout=60,
                             env={k: v for k, v in os.environ.items()
                                  if k != "CRUCIBLE_SERVE_TOKEN"})
    assert refused.returncode == 2 and "--token" in refused.stderr
    service = serve("--lanes", "cpu", "--host", "0.0.0.0", "--token", "s3cret")
    status, body, headers = service.call("GET", "/health")
    assert status == 401 and "Bearer" in body["error"] and headers["WWW-Authenticate"] == "Bearer"
    service.token = "wrong"
    assert service.call("GET", "/health")[0] == 401
    service.token = "s3cret"
    status, body, _ = service.call("GET", "/health")
    assert status == 200 and body["lanes"][0]["name"] == "cpu"


def test_tasks_are_handed_out_fewest_operators_first_and_round_again(serve, tmp_path):
    folder = tmp_path / "tasks"
    folder.mkdir()
    index = []
    for k, ops in enumerate([["relu", "add", "mul"], ["relu"], ["relu", "add"]], start=1):
        (folder / f"{k}_T.py").write_text(REFERENCE)
        index.append({"file": f"{k}_T.py", "name": "T", "level": "synth", "ops": ops})
    (folder / "index.json").write_text(__import__("json").dumps(index))
    service = serve("--lanes", "cpu", "--tasks", str(folder))
    handed = [service.call("GET", "/tasks/next")[1] for _ in range(4)]
    assert [len(t["ops"]) for t in handed] == [1, 2, 3, 1]
    assert handed[0]["task_id"] == "2_T" and handed[0]["reference_code"] == REFERENCE
    assert handed[0]["origin"] == "folder"
    assert service.health()["tasks"]["handed_out"] == 4
    none = serve("--lanes", "cpu")
    status, body, _ = none.call("GET", "/tasks/next")
    assert status == 404 and "--tasks DIR or --synth-ops N" in body["error"]


def test_fresh_tasks_are_synthesized_when_asked_for(serve):
    service = serve("--lanes", "cpu", "--synth-ops", "2")
    status, task, _ = service.call("GET", "/tasks/next")
    assert status == 200, task
    assert task["origin"] == "synth" and task["task_id"].startswith("synth-")
    # `ops` lists the task's distinct operators: two drawn may be one twice (sin(sin(x))).
    assert 1 <= len(task["ops"]) <= 2 and "class Model" in task["reference_code"]
    second = service.call("GET", "/tasks/next")[1]
    assert second["task_id"] != task["task_id"]
