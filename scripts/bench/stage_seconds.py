"""Where each stored verification's seconds went: one line per evaluation in a Crucible
database (from `generate`, `bench` or the workbench), with the wall time the stages add up to
(static, reference, the longer of candidate and baseline, which run side by side, compare) and
the candidate's and baseline's phases; "baseline (kept)" is a session on a timer kept from an
earlier candidate.

Usage: python3 scripts/bench/stage_seconds.py DB [--json]
"""
import argparse
import json
import sqlite3
import sys


def rows(db_path):
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    query = ("select e.id, t.name, e.verdict, e.report_json from evaluations e "
             "join candidates c on c.id = e.candidate_id join tasks t on t.id = c.task_id "
             "order by e.id")
    for eid, task, verdict, body in db.execute(query):
        stages = {}
        for s in json.loads(body).get("stage_seconds") or []:
            stages[s["stage"]] = stages.get(s["stage"], 0.0) + s["seconds"]
        reference = stages.get("reference", stages.get("reference (reused)", 0.0))
        wall = (stages.get("static", 0.0) + reference + stages.get("compare", 0.0)
                + max(stages.get("candidate", 0.0), stages.get("baseline", 0.0),
                      stages.get("baseline (kept)", 0.0)))
        yield {"id": eid, "task": task, "verdict": verdict, "wall_s": round(wall, 2),
               "reference_reused": "reference (reused)" in stages,
               "stages": {k: round(v, 2) for k, v in stages.items()}}


def text(row):
    stages = row["stages"]
    top = ", ".join(f"{k} {v}" for k, v in stages.items() if "/" not in k)
    lines = [f"#{row['id']} {row['task']} {row['verdict']}: {row['wall_s']} s ({top})"]
    for side in ("candidate", "baseline", "baseline (kept)", "reference", "compare"):
        phases = ", ".join(f"{k.split('/', 1)[1]} {v}" for k, v in stages.items()
                           if k.startswith(side + "/"))
        if phases:
            lines.append(f"    {side}: {phases}")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db")
    parser.add_argument("--json", action="store_true", help="one JSON object a line")
    args = parser.parse_args()
    try:
        for row in rows(args.db):
            print(json.dumps(row) if args.json else text(row))
    except sqlite3.Error as exc:
        print(f"stage_seconds.py: {args.db}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
