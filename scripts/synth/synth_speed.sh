#!/usr/bin/env bash
# The built-in synthesizer's speed on one backend: for each bundled task, `crucible synth -n N`,
# every candidate verified with REPS timed repetitions, and a table of eager PyTorch time, the
# fastest verified candidate's time, their ratio and that candidate's tiling. The machine's load
# average is printed before and after (timings on a shared machine only compare side by side).
# Usage:
#   scripts/synth/synth_speed.sh [--backend opencl|interpret|cuda] [--levels "1 2"] [--only REGEX]
#                          [--shrink] [-n N] [--out DIR]
# --shrink caps the tasks' size constants (scripts/synth/synth_shrink.py). Needs build/bin/crucible
# (or CRUCIBLE_BIN). TRIALS (default 1), REPS (default 20) and TIMEOUT tune the verifier.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${CRUCIBLE_BIN:-$here/build/bin/crucible}
backend=opencl levels="1 2" only= shrink=0 n=4
out=$(mktemp -d -t crucible-synth-speed-XXXXXX)
while [ $# -gt 0 ]; do
  case $1 in
    --backend) backend=$2; shift 2 ;;
    --levels) levels=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --shrink) shrink=1; shift ;;
    -n) n=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-40s %10s %10s %8s  %s\n' task eager_ms best_ms speedup "best tiling (verified/candidates)"
measure() {
  local name=$1 ref=$2 dir=$3 cand
  if ! "$bin" synth "$ref" -n "$n" --backend "$backend" --out "$dir" --json > "$dir/synth.json" \
       2> "$dir/synth.err"; then
    printf '%-40s %10s %10s %8s  %s\n' "$name" - - - "not lowered"
    return
  fi
  for cand in "$dir"/candidate_*.py; do
    "$bin" verify "$ref" "$cand" --backend "$backend" --no-db --json --no-compile-baseline \
      --trials "${TRIALS:-1}" --reps "${REPS:-20}" --timeout "${TIMEOUT:-600}" \
      > "${cand%.py}.verify.json" 2> "${cand%.py}.verify.err"
  done
  python3 - "$dir" "$name" <<'PY'
import json, pathlib, sys
folder, name = pathlib.Path(sys.argv[1]), sys.argv[2]
labels = [c["label"] for c in json.loads((folder / "synth.json").read_text())["candidates"]]
best, verified = None, 0
for k, label in enumerate(labels):
    try:
        e = json.loads((folder / f"candidate_{k}.verify.json").read_text())
    except (OSError, json.JSONDecodeError):
        continue
    t = e.get("timing") or {}
    if e.get("verdict") != "verified" or not t.get("candidate_ms"):
        continue
    verified += 1
    if best is None or t["candidate_ms"] < best[1]:
        best = (t.get("reference_ms"), t["candidate_ms"], label)
if best is None:
    print(f"{name:40s} {'-':>10s} {'-':>10s} {'-':>8s}  none verified (0/{len(labels)})")
else:
    eager, ms, label = best
    ratio = eager / ms if eager else float("nan")
    print(f"{name:40s} {eager:10.3f} {ms:10.3f} {ratio:7.2f}x  {label} ({verified}/{len(labels)})")
PY
}
. "$here/scripts/synth/task_loop.sh"
each_task measure
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg) (files in $out)"
