"""Running the candidate stage in tests the way the C++ side runs it:
`python -I -B worker.py candidate JOB.json` in a subprocess, facts read from the result fd.

Shared by the interpret-backend and opencl-backend candidate tests.
"""
import concurrent.futures
import json
import os
import subprocess
import sys

from crucible_worker import value_pack as vp

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WORKER = os.path.join(REPO, "core", "worker", "worker.py")


def mark_line(source, mark):
    """The 1-based line of `source` that contains `mark`."""
    for number, line in enumerate(source.splitlines(), start=1):
        if mark in line:
            return number
    raise AssertionError(mark)


class CandidateRun:
    """What one candidate stage produced: exit, messages, facts, files."""

    def __init__(self, name, root, source, completed, messages):
        self.name = name
        self.root = root
        self.source = source
        self.completed = completed
        self.messages = messages
        facts = [m["facts"] for m in messages if m.get("type") == "facts"]
        self.facts = facts[-1] if facts else None
        self.phases = [m["name"] for m in messages if m.get("type") == "phase"]
        self.out_dir = os.path.join(root, "cand")

    def line(self, mark):
        return mark_line(self.source, mark)

    def load(self, name):
        return vp.load(os.path.join(self.out_dir, name))

    def describe(self):
        return (f"{self.name}: rc={self.completed.returncode}\nstderr:\n"
                f"{self.completed.stderr[-4000:]}\nfacts: {json.dumps(self.facts)[:4000]}")


def _message(line):
    """A channel line: the message itself, or a signed {"body": "<message JSON>", "mac"}."""
    message = json.loads(line)
    if isinstance(message, dict) and "body" in message and "type" not in message:
        message = json.loads(message["body"])
    return message


def run_candidate(name, root, source, backend, trial_inputs, alt_inputs=None, env_extra=None):
    """Writes the candidate, its inputs and a job under `root`, runs the stage, returns the run.

    `trial_inputs` is a list with one input list per trial; `alt_inputs`, when given, is the
    alternative batch size's inputs. `env_extra` adds to the environment; a None value
    removes the variable.
    """
    sandbox = os.path.join(root, "sandbox")
    inputs_dir = os.path.join(root, "inputs")
    out_dir = os.path.join(root, "cand")
    for d in (sandbox, inputs_dir, out_dir):
        os.makedirs(d, exist_ok=True)
    candidate_path = os.path.join(sandbox, "candidate.py")
    with open(candidate_path, "w", encoding="utf-8") as f:
        f.write(source)
    vp.save(os.path.join(inputs_dir, "init.ctp"), [])
    for k, inputs in enumerate(trial_inputs):
        vp.save(os.path.join(inputs_dir, f"inputs_{k}.ctp"), inputs)
    if alt_inputs is not None:
        vp.save(os.path.join(inputs_dir, "inputs_alt.ctp"), alt_inputs)
    job = {"candidate_path": candidate_path, "inputs_dir": inputs_dir, "out_dir": out_dir,
           "backend": backend, "device": "cpu", "seed": 42, "trials": len(trial_inputs),
           "alt": alt_inputs is not None,
           "timing": {"warmup": 1, "reps": 3, "min_time_s": 0, "check_reps": 2},
           "allowed_roots": [out_dir, inputs_dir]}
    job_path = os.path.join(root, "job.json")
    with open(job_path, "w", encoding="utf-8") as f:
        json.dump(job, f)
    channel_path = os.path.join(root, "channel.jsonl")
    with open(channel_path, "wb") as channel:
        env = dict(os.environ, CRUCIBLE_RESULT_FD=str(channel.fileno()))
        env.pop("TRITON_INTERPRET", None)
        for key, value in (env_extra or {}).items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        completed = subprocess.run([sys.executable, "-I", "-B", WORKER, "candidate", job_path],
                                   pass_fds=(channel.fileno(),), env=env, cwd=sandbox,
                                   capture_output=True, text=True, timeout=600)
    with open(channel_path, encoding="utf-8") as f:
        messages = [_message(line) for line in f if line.strip()]
    return CandidateRun(name, root, source, completed, messages)


def run_all(names, run_one, base, workers):
    """Runs `run_one(name, root)` for every name in parallel; {name: CandidateRun}."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {name: pool.submit(run_one, name, str(base / name)) for name in names}
        return {name: future.result() for name, future in futures.items()}


def completed_run(results, name):
    """The named run, which must have exited cleanly and reported facts."""
    r = results[name]
    assert r.completed.returncode == 0, r.describe()
    assert r.facts is not None, r.describe()
    return r
