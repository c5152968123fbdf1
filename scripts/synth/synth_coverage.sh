#!/usr/bin/env bash
# The built-in synthesizer over the bundled level-1 and level-2 tasks: for each task, synthesize
# (crucible synth), verify the first candidate (crucible verify), and print a table of task,
# lowered?, verdict and speedup. Usage:
#   scripts/synth/synth_coverage.sh [--backend interpret|opencl|cuda] [--levels "1 2"] [--out DIR] [--shrink]
#                             [--only REGEX]
# --only keeps the tasks whose name (levelN/FILE, without .py) matches the extended regex.
# --shrink verifies copies of the tasks with their module-level size constants capped
# (scripts/synth/synth_shrink.py: batch 3, height/width 12, channels 8, groups 4, other sizes 48), so a
# CPU backend covers every task in minutes.
# Needs a built build/bin/crucible. Candidates and verifier JSON are kept in DIR. TRIALS (default
# 1), REPS (timed repetitions, default 10) and TIMEOUT (seconds per candidate) tune the verifier.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${CRUCIBLE_BIN:-$here/build/bin/crucible}
backend=interpret
levels="1 2"
shrink=0
only=
out=$(mktemp -d -t crucible-synth-coverage-XXXXXX)
while [ $# -gt 0 ]; do
  case $1 in
    --backend) backend=$2; shift 2 ;;
    --levels) levels=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --shrink) shrink=1; shift ;;
    --only) only=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
trials=${TRIALS:-1}
printf '%-40s %-8s %-11s %s\n' task lowered verdict speedup
# speedup: eager PyTorch time / candidate time on this backend (meaningless on interpret, where
# the kernels run in a NumPy emulation)
lowered=0 verified=0 total=0
cover() {
  local name=$1 ref=$2 dir=$3 why verdict speedup
  total=$((total + 1))
  if ! "$bin" synth "$ref" -n 1 --backend "$backend" --out "$dir" > "$dir/synth.txt" 2>&1; then
    why=$(grep -m1 'cannot lower' "$dir/synth.txt" | sed 's/cannot lower: //')
    [ -z "$why" ] && why=$(tail -1 "$dir/synth.txt")
    printf '%-40s %-8s %-11s %s\n' "$name" no - "$why"
    return
  fi
  lowered=$((lowered + 1))
  "$bin" verify "$ref" "$dir/candidate_0.py" --backend "$backend" --no-db --json \
    --no-compile-baseline --trials "$trials" --reps "${REPS:-10}" --timeout "${TIMEOUT:-600}" > "$dir/verify.json" 2> "$dir/verify.err"
  verdict=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("verdict"))' "$dir/verify.json" 2>/dev/null || echo error)
  speedup=$(python3 -c 'import json,sys; e=json.load(open(sys.argv[1])); s=e.get("speedup"); print("-" if s is None else "%.2f" % s)' "$dir/verify.json" 2>/dev/null || echo -)
  [ "$verdict" = verified ] && verified=$((verified + 1))
  printf '%-40s %-8s %-11s %s\n' "$name" yes "$verdict" "$speedup"
}
. "$here/scripts/synth/task_loop.sh"
each_task cover
echo
echo "lowered $lowered of $total, verified $verified of $total (backend $backend; files in $out)"
