#!/usr/bin/env bash
# What verification costs, before and after a change: every corpus case the two trees share is
# verified by each tree's own CLI and worker, in turns (before, after, before, ...) so that load
# drifting on a busy machine hits both alike. Prints per-case seconds and the totals.
# Usage: [BACKEND=interpret] [ROUNDS=1] scripts/bench/bench_verify_cost.sh BEFORE_ROOT AFTER_ROOT OUT_DIR
# Each root is a checkout with build/bin/crucible and build/bin/corpus_check built.
set -uo pipefail
before="$(cd "${1:?usage: bench_verify_cost.sh BEFORE_ROOT AFTER_ROOT OUT_DIR}" && pwd)"
after="$(cd "${2:?}" && pwd)"
out="${3:?}"
mkdir -p "$out"
export CRUCIBLE_CORPUS_BACKEND="${BACKEND:-interpret}"
rounds="${ROUNDS:-1}"
results="$out/results.tsv"
printf 'round\tcase\tbefore_s\tafter_s\tbefore_ok\tafter_ok\n' > "$results"

# Seconds one tree takes for one case (its own corpus_check times its own crucible).
time_case() {
  local root="$1" case_dir="$2" log="$3" start end ok=1
  start=$(date +%s.%N)
  "$root/build/bin/corpus_check" "$root/build/bin/crucible" "$case_dir" > "$log" 2>&1 || ok=0
  end=$(date +%s.%N)
  printf '%s %s' "$(echo "$end - $start" | bc)" "$ok"
}

for ((r = 1; r <= rounds; r++)); do
  for case_dir in "$before"/tests/corpus/pass/*/ "$before"/tests/corpus/fail/*/; do
    rel="${case_dir#"$before"/}"
    [ -d "$after/$rel" ] || continue  # only the cases both trees have
    name="$(basename "$(dirname "$rel")").$(basename "$rel")"
    read -r b_s b_ok <<< "$(time_case "$before" "$before/$rel" "$out/$name.before.log")"
    read -r a_s a_ok <<< "$(time_case "$after" "$after/$rel" "$out/$name.after.log")"
    printf '%d\t%s\t%.2f\t%.2f\t%s\t%s\n' "$r" "$name" "$b_s" "$a_s" "$b_ok" "$a_ok" |
      tee -a "$results"
  done
done
awk -F'\t' 'NR > 1 { b += $3; a += $4; n++ }
  END { printf "cases %d: before %.1f s, after %.1f s, after/before %.3f\n", n, b, a, a / b }' \
  "$results" | tee "$out/summary.txt"
