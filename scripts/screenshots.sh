#!/usr/bin/env bash
# Renders the workbench's main states (generated, ir, profile, verified, incorrect, compare,
# sessions) under Xvfb into docs/screenshots/ as small PNGs, on the default backend (auto:
# opencl on a machine without an NVIDIA GPU). Needs a configured build (scripts/setup.sh) and
# xvfb-run.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="${1:-docs/screenshots}"
cmake --build --preset default --target crucible_screenshots
# A worktree's .venv may be a symlink, which the worker's sandbox cannot follow.
export CRUCIBLE_PYTHON="${CRUCIBLE_PYTHON:-$(readlink -f .venv)/bin/python}"
export CRUCIBLE_RESOURCES_DIR="$root/resources"
# Eager PyTorch on one thread: on a shared, loaded machine its thread pool's spinning made a
# 32x200 softmax take milliseconds instead of microseconds, and the speedups meaningless.
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
xvfb-run -a -s "-screen 0 1600x1000x24" build/bin/crucible_screenshots "$out"
ls -l "$out"/*.png
