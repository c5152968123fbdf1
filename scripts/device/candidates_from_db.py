#!/usr/bin/env python3
"""Writes a bench run's stored tasks and first candidates out as files, to profile them again.

`crucible bench --db FILE` keeps every task's source as it ran (rescaled where --scale or
--shrink changed it) and every candidate's code. This writes, for each stored task whose name
contains one of the given fragments (all tasks without any), `OUT/<task>.ref.py` and
`OUT/<task>.cand.py` (the task's first candidate), which `profile_candidate.py` and
`watch_cost.py` take as they are.

Usage: candidates_from_db.py BENCH.db OUT_DIR [NAME_FRAGMENT ...]
"""
import os
import sqlite3
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    db_path, out = sys.argv[1], sys.argv[2]
    fragments = sys.argv[3:]
    if not os.path.exists(db_path):
        sys.exit(f"candidates_from_db.py: {db_path}: no such file")
    os.makedirs(out, exist_ok=True)
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    written = 0
    for task_id, name, source in db.execute("SELECT id, name, source FROM tasks ORDER BY id"):
        if fragments and not any(f in name for f in fragments):
            continue
        row = db.execute("SELECT code FROM candidates WHERE task_id = ? ORDER BY id LIMIT 1",
                         (task_id,)).fetchone()
        if row is None:
            print(f"{name}: no candidate stored", file=sys.stderr)
            continue
        base = os.path.basename(name)
        with open(os.path.join(out, base + ".ref.py"), "w") as f:
            f.write(source)
        with open(os.path.join(out, base + ".cand.py"), "w") as f:
            f.write(row[0])
        written += 1
    print(f"{written} task(s) written to {out}")
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main())
