#!/usr/bin/env bash
# The evaluation service's throughput and overhead on a GPU machine, with the static CLI in
# build-device/ (device_bench.sh's header says how to build it). For each REF.ref.py /
# REF.cand.py pair in TASK_DIR (candidates_from_db.py writes them from a bench run):
#   1. `crucible verify` one after the other: the baseline's evaluations per minute;
#   2. `crucible serve` with one lane (cuda:0), the same pairs in one POST /evaluate/batch;
#   3. with a lane per GPU, when the machine has more than one.
# Writes OUT_DIR/serve_report.json and prints evaluations per minute for each and the service's
# overhead over crucible verify.
# Usage: [TRIALS=3] [COMPILE=0] [RUNS=verify,one,all] scripts/device/device_serve.sh TASK_DIR OUT_DIR
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tasks="${1:?usage: device_serve.sh TASK_DIR OUT_DIR}"
out="${2:?usage: device_serve.sh TASK_DIR OUT_DIR}"
mkdir -p "$out"
export CRUCIBLE_PYTHON="${CRUCIBLE_PYTHON:-$(command -v python3)}"
bin="${CRUCIBLE_BIN:-$root/build-device/bin/crucible}"
exec python3 "$root/scripts/device/serve_throughput.py" "$bin" "$tasks" "$out" \
  --trials "${TRIALS:-3}" --runs "${RUNS:-verify,one,all}" $([ "${COMPILE:-0}" = 0 ] && echo --no-compile-baseline)
