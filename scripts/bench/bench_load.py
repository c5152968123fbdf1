"""Speedups under load: the bundled examples verified on a quiet machine and beside busy
processes, by one or several trees, in turns (tree A, tree B, tree A, ...).

A speedup passes when it stays within 30% of the same tree's quiet median, or says it is noisy;
a confident number far from the quiet one fails. Writes results.jsonl and summary.md to OUT.

Usage: .venv/bin/python scripts/bench/bench_load.py OUT ROOT [ROOT...]
         [--runs N] [--loads 0,spin2,torch2] [--examples row_softmax,silu_residual]
Each ROOT is a checkout with build/bin/crucible built. Loads: "0" (quiet), "spinN" (N plain busy
loops) and "torchN" (N processes multiplying matrices on PyTorch's default threads, the load a
desktop that runs another PyTorch job carries).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOLERANCE = 0.30
SPIN = "while True: pass"
TORCH = ("import torch\n"
         "a = torch.randn(768, 768)\n"
         "while True: a @ a\n")


def start_load(load):
    """The busy processes of `load`: "0", "spinN" or "torchN"."""
    if load == "0":
        return []
    kind, count = load.rstrip("0123456789"), int(load[len(load.rstrip("0123456789")):] or 1)
    code = {"spin": SPIN, "torch": TORCH}[kind]
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) for _ in range(count)]
    time.sleep(3)  # past the imports: the load is on when the verification starts
    return procs


def stop_load(procs):
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


def verify(root, example):
    folder = os.path.join(REPO, "resources", "examples", example)
    started = time.monotonic()
    run = subprocess.run([os.path.join(root, "build", "bin", "crucible"), "verify",
                          os.path.join(folder, "reference.py"),
                          os.path.join(folder, "candidate.py"), "--json", "--no-db"],
                         capture_output=True, text=True, timeout=1800)
    seconds = time.monotonic() - started
    try:
        e = json.loads(run.stdout)
    except json.JSONDecodeError:
        return {"error": (run.stderr or run.stdout)[-500:], "seconds": seconds}
    t = e.get("timing") or {}
    return {"verdict": e.get("verdict"), "speedup": e.get("speedup"),
            "spread": e.get("speedup_spread"), "compile_spread": e.get("compile_speedup_spread"),
            "reference_ms": t.get("reference_ms"), "candidate_ms": t.get("candidate_ms"),
            "compile_ms": t.get("compile_reference_ms"), "threads": t.get("threads"),
            "rounds": t.get("rounds"), "interleaved": t.get("interleaved"),
            "flags": [f["id"] for f in e.get("flags", [])], "seconds": seconds,
            "samples": _round_samples(e)}


def _round_samples(e):
    """Each side's timed rounds (ms per call), so another spread rule can be tried on them."""
    facts = e.get("facts") or {}
    ref = (facts.get("reference") or {}).get("timing") or {}
    cand = (facts.get("candidate") or {}).get("timing") or {}
    return {"reference": ref.get("eager_fresh_rounds_ms") or ref.get("eager_rounds_ms"),
            "compile": ref.get("compile_fresh_rounds_ms") or ref.get("compile_rounds_ms"),
            "candidate": cand.get("fresh_rounds_ms")}


def judge(rows):
    """Each loaded row against its tree's quiet median: ok, noisy or off."""
    quiet = {}
    for r in rows:
        if r["load"] == "0" and r.get("speedup"):
            quiet.setdefault((r["tree"], r["example"]), []).append(r["speedup"])
    for r in rows:
        base = quiet.get((r["tree"], r["example"]))
        if not r.get("speedup") or not base:
            r["outcome"] = "no speedup"
            continue
        r["quiet"] = statistics.median(base)
        r["ratio"] = r["speedup"] / r["quiet"]
        noisy = bool(r.get("spread") and r["spread"].get("noisy"))
        if abs(r["ratio"] - 1) <= TOLERANCE:
            r["outcome"] = "within 30%"
        else:
            r["outcome"] = "noisy (said so)" if noisy else "OFF"


def summary(rows, trees):
    lines = ["| tree | example | load | speedup | range | quiet median | ratio | outcome | s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        spread = r.get("spread") or {}
        rng = f"{spread['low']:.3g}-{spread['high']:.3g}" if spread else "-"
        speed = f"{r['speedup']:.3g}x" if r.get("speedup") else r.get("error", "-")[:40]
        lines.append(f"| {trees[r['tree']]} | {r['example']} | {r['load']} | {speed} | {rng} | "
                     f"{r.get('quiet', 0):.3g}x | {r.get('ratio', 0):.2f} | {r['outcome']} | "
                     f"{r['seconds']:.0f} |")
    off = sum(r["outcome"] == "OFF" for r in rows)
    lines.append("")
    lines.append(f"{off} confident speedup(s) more than 30% off the quiet median")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("roots", nargs="+")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--loads", default="0,spin2,torch2")
    parser.add_argument("--examples", default="row_softmax,silu_residual")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    trees = {i: os.path.basename(os.path.abspath(r)) for i, r in enumerate(args.roots)}
    rows = []
    with open(os.path.join(args.out, "results.jsonl"), "w", encoding="utf-8") as log:
        for load in args.loads.split(","):
            procs = start_load(load)
            try:
                for run in range(args.runs):
                    for example in args.examples.split(","):
                        for i, root in enumerate(args.roots):  # the trees in turns
                            row = dict(verify(root, example), tree=i, example=example,
                                       load=load, run=run)
                            rows.append(row)
                            log.write(json.dumps(row) + "\n")
                            log.flush()
                            print(json.dumps(row), flush=True)
            finally:
                stop_load(procs)
    judge(rows)
    text = summary(rows, trees)
    with open(os.path.join(args.out, "summary.md"), "w", encoding="utf-8") as f:
        f.write(f"{time.strftime('%Y-%m-%d %H:%M')} on {os.cpu_count()} CPUs\n\n{text}\n")
    print(text)
    return 1 if "OFF" in [r["outcome"] for r in rows] else 0


if __name__ == "__main__":
    sys.exit(main())
