"""The embedded model's decode speed under load: crucible-model on a GGUF, quiet and beside busy
processes or a running verification, once per thread policy, in turns.

Loads: "0", "spinN" (N plain busy loops), "torchN" (N PyTorch matrix loops on their default
threads) and "verify" (`crucible verify` on the bundled silu_residual, again and again, which is
the workbench's own situation). Policies: "default" (the engine as Crucible starts it) and any
"KEY=VALUE[+KEY=VALUE]" set of environment variables for the engine (for example
"OMP_WAIT_POLICY=ACTIVE" or "CRUCIBLE_MODEL_THREADS=1").

Usage: .venv/bin/python scripts/bench/bench_model_load.py OUT GGUF [--runs N] [--tokens N]
         [--loads 0,spin1,spin2,torch2,verify] [--policies default,OMP_WAIT_POLICY=ACTIVE]
Writes results.jsonl and summary.md (median decode tok/s per load and policy, and its ratio to
the same policy's quiet figure) to OUT.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from bench_load import start_load, stop_load  # noqa: E402
from bench_model import run_ours  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def start(load):
    if load != "verify":
        return start_load(load)
    example = os.path.join(REPO, "resources", "examples", "silu_residual")
    loop = (f"while true; do {os.path.join(REPO, 'build', 'bin', 'crucible')} verify "
            f"{example}/reference.py {example}/candidate.py --no-db > /dev/null 2>&1; done")
    proc = subprocess.Popen(["bash", "-c", loop], start_new_session=True)
    time.sleep(8)  # into the verification's stages
    return [proc]


def stop(load, procs):
    if load != "verify":
        return stop_load(procs)
    for p in procs:
        os.killpg(p.pid, 9)
        p.wait()


def with_policy(policy):
    """The environment for the engine under `policy`."""
    env = dict(os.environ)
    env.pop("CRUCIBLE_MODEL_THREADS", None)
    if policy != "default":
        for pair in policy.split("+"):
            key, _, value = pair.partition("=")
            env[key] = value
    return env


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("gguf")
    parser.add_argument("--binary", default=os.path.join(REPO, "build", "bin", "crucible-model"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=48)
    parser.add_argument("--loads", default="0,spin1,spin2,torch2,verify")
    parser.add_argument("--policies", default="default")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows = []
    saved = dict(os.environ)
    with open(os.path.join(args.out, "results.jsonl"), "w", encoding="utf-8") as log:
        for load in args.loads.split(","):
            procs = start(load)
            try:
                for run in range(args.runs):
                    for policy in args.policies.split(","):  # the policies in turns
                        os.environ.clear()
                        os.environ.update(with_policy(policy))
                        try:
                            r = run_ours(args.binary, args.gguf, args.tokens, "auto")
                        finally:
                            os.environ.clear()
                            os.environ.update(saved)
                        row = {"load": load, "policy": policy, "run": run,
                               "decode_tok_s": r["decode_tok_s"], "threads": r["threads"],
                               "decode_cpu_ms": r["decode_cpu_ms"],
                               "load_avg_1m": os.getloadavg()[0]}
                        rows.append(row)
                        log.write(json.dumps(row) + "\n")
                        log.flush()
                        print(json.dumps(row), flush=True)
            finally:
                stop(load, procs)
    lines = ["| load | policy | threads | decode tok/s (median) | runs | of quiet |",
             "|---|---|---|---|---|---|"]
    quiet = {}
    for policy in args.policies.split(","):
        base = [r["decode_tok_s"] for r in rows if r["policy"] == policy and r["load"] == "0"]
        quiet[policy] = statistics.median(base) if base else None
    for load in args.loads.split(","):
        for policy in args.policies.split(","):
            got = [r for r in rows if r["load"] == load and r["policy"] == policy]
            if not got:
                continue
            tok = statistics.median(r["decode_tok_s"] for r in got)
            share = f"{tok / quiet[policy]:.2f}" if quiet[policy] else "-"
            runs = ", ".join(f"{r['decode_tok_s']:.1f}" for r in got)
            lines.append(f"| {load} | {policy} | {got[0]['threads']} | {tok:.1f} | {runs} | "
                         f"{share} |")
    text = "\n".join(lines)
    with open(os.path.join(args.out, "summary.md"), "w", encoding="utf-8") as f:
        f.write(f"{time.strftime('%Y-%m-%d %H:%M')} on {os.cpu_count()} CPUs\n\n{text}\n")
    print(text)


if __name__ == "__main__":
    main()
