#!/usr/bin/env python3
"""Whether two builds' synthesizers write the same kernels: for a refactor of the lowerers.

    scripts/synth/compare_synth.py BEFORE_CLI AFTER_CLI [--tasks DIR] [--backends interpret,opencl,cuda]
                             [-n N] [--limit K]

Runs `crucible synth REFERENCE --backend B -n N --json` with both CLIs on every task of DIR (the
bundled corpus by default) and compares what they print: the candidates' labels, plans and code,
and what could not be lowered. Prints one line per difference and a count; exits 1 when any
task differs, 2 when a run fails in one build only. The tracing runs in each build's worker, so
a pass costs about twice a `crucible synth` of every task.
"""
import argparse
import difflib
import json
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", help="the crucible CLI built before the change")
    parser.add_argument("after", help="the crucible CLI built after it")
    parser.add_argument("--tasks", default=os.path.join(ROOT, "resources", "tasks"))
    parser.add_argument("--backends", default="interpret,opencl,cuda",
                        help="tile menus to compare (synth needs no device for any of them)")
    parser.add_argument("-n", type=int, default=8, help="tilings per task")
    parser.add_argument("--limit", type=int, default=0, help="only the first K tasks")
    args = parser.parse_args(argv)

    tasks = sorted(_tasks(args.tasks))
    if args.limit:
        tasks = tasks[:args.limit]
    differences, one_sided = 0, 0
    for task in tasks:
        for backend in args.backends.split(","):
            before = _synth(args.before, task, backend, args.n)
            after = _synth(args.after, task, backend, args.n)
            name = f"{os.path.relpath(task, args.tasks)} [{backend}]"
            if (before is None) != (after is None):
                one_sided += 1
                print(f"{name}: runs in one build only "
                      f"(before: {'ok' if before else 'failed'}, "
                      f"after: {'ok' if after else 'failed'})")
                continue
            if before != after:
                differences += 1
                print(f"{name}: differs")
                for line in _diff(before, after)[:40]:
                    print("    " + line)
    print(f"{len(tasks)} task(s), {differences} differing, {one_sided} running in one build only",
          file=sys.stderr)
    return 2 if one_sided else 1 if differences else 0


def _tasks(folder):
    for parent, _, names in os.walk(folder):
        for name in names:
            if name.endswith(".py"):
                yield os.path.join(parent, name)


def _synth(cli, task, backend, n):
    """What `crucible synth --json` printed, as JSON text with sorted keys; None when it failed
    to run (exit 2 or 3). Exit 1 (an op not lowered) still prints what it could."""
    done = subprocess.run([cli, "synth", task, "--backend", backend, "-n", str(n), "--json"],
                          capture_output=True, text=True, timeout=900)
    if done.returncode not in (0, 1):
        return None
    try:
        out = json.loads(done.stdout)
    except ValueError:
        return None
    return json.dumps({k: out.get(k) for k in ("candidates", "unsupported")}, indent=1,
                      sort_keys=True)


def _diff(before, after):
    return list(difflib.unified_diff(before.splitlines(), after.splitlines(), "before", "after",
                                     lineterm="", n=1))


if __name__ == "__main__":
    sys.exit(main())
