#!/usr/bin/env bash
# Renders the workbench's main states (verified, incorrect, compare, sessions, generated) under
# Xvfb into docs/screenshots/ as small PNGs. Needs a configured build (scripts/setup.sh) and xvfb-run.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="${1:-docs/screenshots}"
cmake --build --preset default --target crucible_screenshots
# A worktree's .venv may be a symlink, which the worker's sandbox cannot follow.
export CRUCIBLE_PYTHON="${CRUCIBLE_PYTHON:-$(readlink -f .venv)/bin/python}"
export CRUCIBLE_RESOURCES_DIR="$root/resources"
xvfb-run -a -s "-screen 0 1600x1000x24" build/bin/crucible_screenshots "$out"
ls -l "$out"/*.png
