#!/usr/bin/env bash
# Runs the verification corpus with --backend cuda on a machine with an NVIDIA GPU but without
# this project's build dependencies, using statically linked binaries in build-device/:
#   cmake -B build-device -G Ninja -DCRUCIBLE_STATIC_CLI=ON -DCRUCIBLE_BUILD_TESTS=OFF
#   cmake --build build-device --target crucible
#   g++ -std=c++20 -O2 -static tests/corpus/corpus_check.cpp -o build-device/bin/corpus_check
# Usage: [JOBS=N] scripts/device/device_corpus.sh OUT_DIR   (logs and results.jsonl land in OUT_DIR)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${1:?usage: device_corpus.sh OUT_DIR}"
mkdir -p "$out"
export CRUCIBLE_CORPUS_BACKEND=cuda
export CRUCIBLE_PYTHON="${CRUCIBLE_PYTHON:-$(command -v python3)}"
export root out

run_case() {
  local case_dir="$1" name status start end
  name="$(basename "$(dirname "$case_dir")").$(basename "$case_dir")"
  start=$(date +%s)
  if "$root/build-device/bin/corpus_check" "$root/build-device/bin/crucible" "$case_dir" \
       > "$out/$name.log" 2>&1; then status=pass; else status=fail; fi
  end=$(date +%s)
  printf '{"case": "%s", "status": "%s", "seconds": %d}\n' "$name" "$status" \
    $((end - start)) >> "$out/results.jsonl"
  echo "$status $name"
}
export -f run_case

ls -d "$root"/tests/corpus/pass/*/ "$root"/tests/corpus/fail/*/ |
  xargs -P "${JOBS:-1}" -I{} bash -c 'run_case "{}"' | sort > "$out/summary.txt"
cat "$out/summary.txt"
echo "passed $(grep -c '^pass' "$out/summary.txt"), failed $(grep -c '^fail' "$out/summary.txt")"
