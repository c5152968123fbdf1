#!/usr/bin/env bash
# The built-in synthesizer on a GPU machine, over the bundled tasks, in two phases, using the
# static CLI in build-device/ (see scripts/device/device_corpus.sh for how to build it):
#  1. search: `crucible generate TASK -n N_CANDIDATES --backend cuda --trials 1` (every candidate
#     verified, the fastest verified one written to OUT_DIR/TASK/kernel.py), SEARCH_JOBS tasks at
#     a time. Tasks share the GPU here, so these timings only rank the candidates of one task.
#  2. timing: each task's winner re-verified alone (`crucible verify --trials TRIALS`), one task at
#     a time, so the speedups in the table are not disturbed by other processes.
# Then scripts/synth/synth_summary.py prints the table (timed speedups where phase 2 ran).
# Usage: [SEARCH_JOBS=8] [N_CANDIDATES=8] [TRIALS=3] [LEVELS="1 2"] [ONLY=REGEX]
#        [PHASES="search time"] [BACKEND=cuda] scripts/device/device_synth.sh OUT_DIR
# ONLY keeps tasks whose path (levelN/FILE.py) matches the extended regex.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${1:?usage: device_synth.sh OUT_DIR}"
mkdir -p "$out"
export CRUCIBLE_PYTHON="${CRUCIBLE_PYTHON:-$(command -v python3)}"
export root out N_CANDIDATES="${N_CANDIDATES:-8}" BACKEND="${BACKEND:-cuda}"
bin="$root/build-device/bin/crucible"
phases="${PHASES:-search time}"

search_task() {
  local ref="$1" name
  name="$(basename "$(dirname "$ref")")_$(basename "$ref" .py)"
  timeout 1800 "$root/build-device/bin/crucible" generate "$ref" -n "$N_CANDIDATES" \
    --backend "$BACKEND" --trials 1 --no-db --json --out "$out/$name" \
    > "$out/$name.json" 2> "$out/$name.log"
  echo "$name $?"
}
export -f search_task

tasks() {
  for level in ${LEVELS:-1 2}; do ls "$root/resources/tasks/level$level"/*.py; done |
    grep -E "${ONLY:-.}"
}

if [[ " $phases " == *" search "* ]]; then
  start=$(date +%s)
  tasks | xargs -P "${SEARCH_JOBS:-8}" -I{} bash -c 'search_task "{}"' | sort \
    > "$out/exit_codes.txt"
  echo "search: $(( $(date +%s) - start )) s"
fi

if [[ " $phases " == *" time "* ]]; then
  start=$(date +%s)
  for ref in $(tasks); do
    name="$(basename "$(dirname "$ref")")_$(basename "$ref" .py)"
    [ -f "$out/$name/kernel.py" ] || continue
    timeout 900 "$bin" verify "$ref" "$out/$name/kernel.py" --backend "$BACKEND" \
      --trials "${TRIALS:-3}" --no-db --json > "$out/$name.timed.json" 2> "$out/$name.timed.log"
  done
  echo "timing: $(( $(date +%s) - start )) s"
fi
python3 "$root/scripts/synth/synth_summary.py" "$out"
