"""Where a verification's seconds go, per stage, before and after a change: every honest corpus
case (tests/corpus/pass) verified by each tree's own CLI, the trees in turns, and the seconds of
every stage and phase (`stage_seconds`) kept.

Usage: .venv/bin/python scripts/bench/bench_verify_stages.py OUT ROOT [ROOT...]
         [--backend interpret|opencl|cuda] [--cases a,b,...] [--runs N]
Each ROOT is a checkout with build/bin/crucible built. Writes results.jsonl (one verification a
line) and summary.md (per tree: the median seconds of each whole stage over the cases, and of a
whole verification) to OUT. The tree that runs this script provides the cases.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CORPUS = os.path.join(REPO, "tests", "corpus")


def verify(root, case, backend):
    with open(os.path.join(CORPUS, "pass", case, "case.json"), encoding="utf-8") as f:
        spec = json.load(f)
    reference = os.path.join(CORPUS, "references", spec["reference"] + ".py")
    started = time.monotonic()
    run = subprocess.run([os.path.join(root, "build", "bin", "crucible"), "verify", reference,
                          os.path.join(CORPUS, "pass", case, "candidate.py"), "--json",
                          "--no-db", "--backend", backend],
                         capture_output=True, text=True, timeout=1800)
    seconds = time.monotonic() - started
    try:
        e = json.loads(run.stdout)
    except json.JSONDecodeError:
        return {"error": (run.stderr or run.stdout)[-300:], "seconds": seconds, "stages": {}}
    stages = {}
    for s in e.get("stage_seconds", []):
        stages[s["stage"]] = stages.get(s["stage"], 0) + s["seconds"]
    return {"verdict": e.get("verdict"), "seconds": seconds, "stages": stages}


def summary(rows, trees):
    whole = sorted({k for r in rows for k in r["stages"] if "/" not in k})
    lines = ["| tree | verification (s) | " + " | ".join(whole) + " |",
             "|---|---|" + "---|" * len(whole)]
    for i, name in trees.items():
        mine = [r for r in rows if r["tree"] == i]
        cells = [f"{statistics.median(r['seconds'] for r in mine):.1f}"]
        for stage in whole:
            got = [r["stages"][stage] for r in mine if stage in r["stages"]]
            cells.append(f"{statistics.median(got):.1f}" if got else "-")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Medians over the cases; a stage a tree does not have shows as -.")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("roots", nargs="+")
    parser.add_argument("--backend", default="interpret")
    parser.add_argument("--cases", default="")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    cases = args.cases.split(",") if args.cases else sorted(
        os.listdir(os.path.join(CORPUS, "pass")))
    trees = {i: os.path.basename(os.path.abspath(r)) for i, r in enumerate(args.roots)}
    rows = []
    with open(os.path.join(args.out, "results.jsonl"), "w", encoding="utf-8") as log:
        for run in range(args.runs):
            for case in cases:
                for i, root in enumerate(args.roots):  # the trees in turns
                    row = dict(verify(root, case, args.backend), tree=i, case=case, run=run)
                    rows.append(row)
                    log.write(json.dumps(row) + "\n")
                    log.flush()
                    print(f"{trees[i]} {case}: {row.get('verdict')} {row['seconds']:.1f} s",
                          flush=True)
    text = summary(rows, trees)
    with open(os.path.join(args.out, "summary.md"), "w", encoding="utf-8") as f:
        f.write(f"{time.strftime('%Y-%m-%d %H:%M')}, backend {args.backend}, "
                f"{os.cpu_count()} CPUs\n\n{text}\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
