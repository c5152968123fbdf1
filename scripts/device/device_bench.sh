#!/usr/bin/env bash
# `crucible bench` over the bundled corpus on a GPU machine (--backend cuda), using the static CLI
# in build-device/ (built here; the GPU machine has neither this build's libraries nor Qt, so the
# report has no PNG plots and says so; draw them later with `crucible bench --compare`, or rerun
# the same command against the copied report folder on a machine with the full build):
#   cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DCRUCIBLE_STATIC_CLI=ON \
#         -DCRUCIBLE_BUILD_TESTS=OFF
#   cmake --build build-device --target crucible
# Usage: [LEVELS="1,2"] [SAMPLES=K] [JOBS=J] [TRIALS=N] [BACKEND=cuda] [SHRINK=F] [SCALE=F] \
#        [COMPILE=0] [TASKS=DIR] [CRUCIBLE_BIN=PATH] scripts/device/device_bench.sh OUT_DIR
# COMPILE=0 skips the torch.compile baseline (its compile is most of a task's time on a GPU).
# OUT_DIR gets report.md, bench.json, eval_results.json (per level), run.json, results.jsonl,
# bench.db (the stored sessions) and bench.log. The run is resumable: the same command again skips the tasks already in OUT_DIR.
# JOBS > 1 puts several tasks on the GPU at once, so timings get noisier; the default is 1.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${1:?usage: device_bench.sh OUT_DIR}"
mkdir -p "$out"
export CRUCIBLE_PYTHON="${CRUCIBLE_PYTHON:-$(command -v python3)}"
bin="${CRUCIBLE_BIN:-$root/build-device/bin/crucible}"
[ -x "$bin" ] || { echo "device_bench.sh: $bin is missing (see the header for the build)" >&2; exit 2; }

args=(bench "${TASKS:-$root/resources/tasks}" --backend "${BACKEND:-cuda}" --samples "${SAMPLES:-1}"
      --jobs "${JOBS:-1}" --trials "${TRIALS:-5}" --report "$out" --db "$out/bench.db" --json)
[ -n "${LEVELS:-}" ] && args+=(--levels "$LEVELS")
[ -n "${SHRINK:-}" ] && args+=(--shrink "$SHRINK")
[ -n "${SCALE:-}" ] && args+=(--scale "$SCALE")
[ "${COMPILE:-1}" = 0 ] && args+=(--no-compile-baseline)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt" 2>/dev/null || true

"$bin" "${args[@]}" > "$out/bench.stdout.json" 2> >(tee "$out/bench.log" >&2)
status=$?
echo "exit code $status; report in $out/report.md"
python3 - "$out/bench.stdout.json" <<'PY' || true
import json, sys
r = json.load(open(sys.argv[1]))
print(f"tasks {r['tasks_total']}, correct {r['tasks_correct']} ({100 * r['correct_rate']:.1f}%), "
      f"geomean speedup {r['geomean_speedup']}")
print("fast_p", r["fast_p"])
print("fast_p vs torch.compile", r["fast_p_vs_compile"])
PY
exit $status
