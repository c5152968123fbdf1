#!/usr/bin/env bash
# Synthesis speed and operator coverage of `crucible tasks synth` (docs/TASKS.md):
# COUNT tasks (default 1000) of OPS operators (default 5), first without the run check (the
# sampler, the Gecode shape model and the writer), then with it (every task run by the worker).
#
#   scripts/bench/bench_task_synth.sh [OUT_DIR]       results in OUT_DIR (default: a temporary folder)
#   COUNT=200 OPS=3 SEED=1 CHECK=0 scripts/bench/bench_task_synth.sh
#
# Prints the machine, the date, tasks per second and coverage for each mode; the JSON reports
# stay in OUT_DIR (no-check.json, check.json).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
crucible="${CRUCIBLE:-$root/build/bin/crucible}"
count="${COUNT:-1000}" ops="${OPS:-5}" seed="${SEED:-1}" check="${CHECK:-1}"
out="${1:-$(mktemp -d "${TMPDIR:-/tmp}/bench-tasksynth-XXXXXX")}"
mkdir -p "$out"
[ -x "$crucible" ] || { echo "bench-tasksynth: $crucible not built (cmake --build --preset default --target crucible)" >&2; exit 2; }

echo "machine: $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "date:    $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg)"
echo "tasks:   $count of $ops operators, seed $seed"

summary() {  # mode json
  "$root/.venv/bin/python" - "$1" "$2" <<'PY'
import json, sys
mode, path = sys.argv[1], sys.argv[2]
r = json.load(open(path))
used = sum(1 for n in r["coverage"].values() if n)
uses = sorted(r["coverage"].values())
rej = ", ".join(f"{k} {v}" for k, v in r["rejected"].items())
print(f"{mode:9s} {len(r['tasks'])} tasks in {r['seconds']:.1f} s = {r['tasks_per_second']:.2f} tasks/s "
      f"(solve {r['solve_seconds']:.1f} s, check {r['check_seconds']:.1f} s); "
      f"candidates {r['candidates']} (rejected: {rej})")
print(f"{'':9s} coverage {used}/{r['operators']} operators; uses per operator min {uses[0]}, "
      f"median {uses[len(uses)//2]}, max {uses[-1]}; never used: {', '.join(r['unused']) or 'none'}")
if r["tasks"] and any(t["ms"] for t in r["tasks"]):
    ms = sorted(t["ms"] for t in r["tasks"])
    print(f"{'':9s} eager forward ms: median {ms[len(ms)//2]:.2f}, p95 {ms[int(len(ms)*0.95)]:.2f}, max {ms[-1]:.2f}")
PY
}

rm -rf "$out/no-check" "$out/check"
"$crucible" tasks synth --ops "$ops" --count "$count" --seed "$seed" --out "$out/no-check" \
  --no-check --json 2>/dev/null > "$out/no-check.json"
summary no-check "$out/no-check.json"
if [ "$check" = 1 ]; then
  "$crucible" tasks synth --ops "$ops" --count "$count" --seed "$seed" --out "$out/check" \
    --json 2>/dev/null > "$out/check.json"
  summary check "$out/check.json"
fi
echo "reports: $out"
