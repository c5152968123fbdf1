#!/usr/bin/env bash
# What the verifier's watchers cost candidates on a GPU machine, idle and under load: writes a
# bench run's tasks and first candidates out of its database (candidates_from_db.py), then runs
# watch_cost.py on each, first alone, then with LOAD busy CPU processes beside it (a desktop that
# generates while it verifies), into OUT_DIR/watch_cost.txt.
# Usage: [LOAD=8] [CALLS=60] [BACKEND=cuda] scripts/device/device_watch_cost.sh BENCH.db OUT_DIR [NAME_FRAGMENT ...]
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
db="${1:?usage: device_watch_cost.sh BENCH.db OUT_DIR [NAME_FRAGMENT ...]}"
out="${2:?usage: device_watch_cost.sh BENCH.db OUT_DIR [NAME_FRAGMENT ...]}"
shift 2
python="${CRUCIBLE_PYTHON:-$(command -v python3)}"
mkdir -p "$out/tasks"
"$python" "$root/scripts/device/candidates_from_db.py" "$db" "$out/tasks" "$@" || exit 2
report="$out/watch_cost.txt"
: > "$report"

probe() {  # $1: a label for the conditions
  for ref in "$out"/tasks/*.ref.py; do
    name="$(basename "$ref" .ref.py)"
    echo "== $name ($1)" | tee -a "$report"
    timeout 300 "$python" "$root/scripts/device/watch_cost.py" "$ref" "$out/tasks/$name.cand.py" \
      --backend "${BACKEND:-cuda}" --calls "${CALLS:-60}" 2>&1 | grep -v -i warning | tee -a "$report"
  done
}

probe idle
# Busy loops on LOAD cores, as a model generating beside the verifier would keep them.
pids=()
for _ in $(seq "${LOAD:-8}"); do
  "$python" -c "while True: pass" &
  pids+=($!)
done
probe "under load: ${LOAD:-8} busy processes"
kill "${pids[@]}" 2>/dev/null
echo "report in $report"
