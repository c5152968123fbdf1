#!/usr/bin/env bash
# The workbench's IR and profile views on a GPU machine, as `crucible ir` and `crucible profile`
# report them, using the static CLI in build-device/ (see scripts/device/device_corpus.sh for
# how to build it): for each task, the built-in synthesizer's fastest candidate
# (`crucible generate`), then what its kernels compile to on cuda (TTIR, TTGIR, LLVM IR, PTX,
# with their Python lines) and its launches timed, counted and placed against the GPU's
# measured peaks. Writes OUT_DIR/NAME.{ir,profile}.json and .txt; prints a short summary.
# Usage: [BACKEND=cuda] [N_CANDIDATES=4] scripts/device/device_inspect.sh OUT_DIR TASK.py...
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${1:?usage: device_inspect.sh OUT_DIR TASK.py...}"
shift
mkdir -p "$out"
export CRUCIBLE_PYTHON="${CRUCIBLE_PYTHON:-$(command -v python3)}"
bin="$root/build-device/bin/crucible"
backend="${BACKEND:-cuda}"
for ref in "$@"; do
  name="$(basename "$(dirname "$ref")")_$(basename "$ref" .py)"
  timeout 900 "$bin" generate "$ref" -n "${N_CANDIDATES:-4}" --backend "$backend" --trials 1 \
    --no-db --json --out "$out/$name" > "$out/$name.generate.json" 2> "$out/$name.generate.log"
  kernel="$out/$name/kernel.py"
  if [ ! -f "$kernel" ]; then
    echo "$name: no verified candidate (see $name.generate.log)"
    continue
  fi
  for view in ir profile; do
    timeout 900 "$bin" "$view" "$kernel" --reference "$ref" --backend "$backend" --json \
      > "$out/$name.$view.json" 2> "$out/$name.$view.log"
    echo "$name $view exit $?"
    timeout 900 "$bin" "$view" "$kernel" --reference "$ref" --backend "$backend" \
      > "$out/$name.$view.txt" 2>> "$out/$name.$view.log"
  done
done
