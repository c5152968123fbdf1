#!/usr/bin/env bash
# The built-in synthesizer on a GPU machine: `crucible generate` (synthesizer, best-of-N, each
# candidate verified) over the bundled level-1/level-2 tasks with --backend cuda, using the static
# CLI in build-device/ (see scripts/device-corpus.sh for how to build it). Tasks run JOBS at a time;
# with JOBS > 1 they share the GPU, so timings are noisier than a one-at-a-time run.
# Usage: [JOBS=N] [N_CANDIDATES=K] [LEVELS="1 2"] scripts/device-synth.sh OUT_DIR
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:?usage: device-synth.sh OUT_DIR}"
mkdir -p "$out"
export CRUCIBLE_PYTHON="${CRUCIBLE_PYTHON:-$(command -v python3)}"
export root out N_CANDIDATES="${N_CANDIDATES:-2}" BACKEND="${BACKEND:-cuda}"

run_task() {
  local ref="$1" name
  name="$(basename "$(dirname "$ref")")_$(basename "$ref" .py)"
  timeout 900 "$root/build-device/bin/crucible" generate "$ref" -n "$N_CANDIDATES" \
    --backend "$BACKEND" --trials 3 --no-db --json > "$out/$name.json" 2> "$out/$name.log"
  echo "$name $?"
}
export -f run_task

for level in ${LEVELS:-1 2}; do ls "$root/resources/tasks/level$level"/*.py; done |
  xargs -P "${JOBS:-1}" -I{} bash -c 'run_task "{}"' | sort > "$out/exit_codes.txt"
python3 "$root/scripts/synth_summary.py" "$out"
