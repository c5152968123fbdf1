"""Summarises `crucible generate --json` results, one file per task (TASK.json in a folder), as
the synthesizer's benchmark table: per level, tasks lowered, verified, fast_1 (verified and
faster than eager) and the geometric-mean speedup of the best verified candidate.
Usage: python3 scripts/synth_summary.py DIR"""
import json
import math
import pathlib
import sys


def best_speedup(result):
    best = result.get("best")
    for c in result.get("candidates", []):
        if c.get("id") == best:
            return c.get("speedup")
    return None


def main(folder):
    rows = {}
    for path in sorted(pathlib.Path(folder).glob("level*.json")):
        level = path.stem.split("_")[0]
        try:
            result = json.loads(path.read_text() or "{}")
        except json.JSONDecodeError:
            result = {}
        candidates = result.get("candidates", [])
        speedup = best_speedup(result)
        rows.setdefault(level, []).append((path.stem, bool(candidates), speedup))
        verdicts = ",".join(c.get("verdict", "?") for c in candidates) or "not lowered"
        print(f"{path.stem:45s} {verdicts:30s} {'' if speedup is None else f'{speedup:.2f}x'}")
    print()
    print("| level | tasks | lowered | verified | fast_1 | geomean speedup (verified) |")
    print("|---|---|---|---|---|---|")
    for level, items in sorted(rows.items()):
        verified = [s for _, _, s in items if s is not None]
        fast = sum(1 for s in verified if s > 1)
        geo = math.exp(sum(math.log(s) for s in verified) / len(verified)) if verified else None
        print(f"| {level} | {len(items)} | {sum(1 for _, l, _ in items if l)} | {len(verified)} "
              f"| {fast} | {'-' if geo is None else f'{geo:.2f}x'} |")


if __name__ == "__main__":
    main(sys.argv[1])
