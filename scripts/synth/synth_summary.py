"""Summarises `crucible generate --json` results, one file per task (TASK.json in a folder), as
the synthesizer's benchmark table: per level, tasks lowered, verified, fast_1 (verified and
faster than eager) and the geometric-mean speedup of the best verified candidate. Where the
winner was re-verified alone (TASK.timed.json, `crucible verify --json`, from device_synth.sh's
timing phase), that run's verdict and speedup count instead of the search's.
Usage: python3 scripts/synth/synth_summary.py DIR"""
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


def read_json(path):
    try:
        return json.loads(path.read_text() or "{}")
    except (OSError, json.JSONDecodeError):
        return {}


def timed_speedup(path, search_speedup):
    """The lone re-verification's speedup (None when it did not verify); the search's figure
    when there was no timing run."""
    timed = path.with_name(path.stem + ".timed.json")
    if not timed.exists():
        return search_speedup
    result = read_json(timed)
    return result.get("speedup") if result.get("verdict") == "verified" else None


def main(folder):
    rows = {}
    for path in sorted(pathlib.Path(folder).glob("level*.json")):
        if path.name.endswith(".timed.json"):
            continue
        level = path.stem.split("_")[0]
        result = read_json(path)
        candidates = result.get("candidates", [])
        speedup = timed_speedup(path, best_speedup(result))
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
        print(f"| {level} | {len(items)} | {sum(1 for _, lowered, _ in items if lowered)} | {len(verified)} "
              f"| {fast} | {'-' if geo is None else f'{geo:.2f}x'} |")


if __name__ == "__main__":
    main(sys.argv[1])
