#!/usr/bin/env bash
# Benchmarks of the opencl backend (results in docs/PERFORMANCE.md, "OpenCL backend"): every
# kernel of scripts/bench/bench_opencl_kernels.py on Crucible's Triton-to-OpenCL compiler (PoCL, all
# cores) against eager PyTorch on the CPU (same thread count) and the Triton interpreter, the
# cold compile per kernel and the warm-cache launch path.
#
#   scripts/bench/bench_opencl.sh                      the full run (a few minutes on 2 cores)
#   scripts/bench/bench_opencl.sh --json out.json      also write the results as JSON
#   scripts/bench/bench_opencl.sh --cases softmax,layernorm --repeats 20 --no-interpreter
#   scripts/bench/bench_opencl.sh --help               every option
#
# Prints the machine, date, load average (before and after) and thread counts with the tables.
# On a shared machine run it several times at quiet moments (`uptime`): only ratios measured
# side by side mean anything under load.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
python="${PYTHON:-$root/.venv/bin/python}"
lib="${CRUCIBLE_TCL_LIB:-$root/build/lib/libcrucible_tcl.so}"
[ -f "$lib" ] || { echo "bench-opencl: $lib not built (cmake --build --preset default --target crucible_tcl)" >&2; exit 2; }
export CRUCIBLE_TCL_LIB="$lib"
exec "$python" "$root/scripts/bench/bench_opencl.py" "$@"
