#!/usr/bin/env bash
# Builds the .deb from a build folder and checks it the way a Debian 12 machine would take it:
# its files (the programs, the worker, the OpenCL compiler's library, the bundled resources, the
# desktop entry and icon; nothing from the build or source tree, no crucible-model), the
# RUNPATHs of its ELF files, its declared dependencies, that `apt-get install --simulate`
# resolves it here, and that the programs unpacked into a temporary root run from there: the
# missing Python environment is reported with the command that makes it, and `crucible verify`
# verifies a bundled example with the package's own worker and library, the environment found
# where crucible-setup-python puts it. Any problem fails the script with a message.
#
#   scripts/check_deb.sh [BUILD_DIR]     (default: build; crucible, crucible-gui and
#                                         crucible_tcl must be built there)
# CTest runs it as the test `package.deb` (label `package`).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$repo/build}" && pwd)"

fail() { echo "check_deb: FAIL: $*" >&2; exit 1; }
step() { echo "check_deb: $*"; }

for tool in cpack dpkg-deb dpkg-shlibdeps readelf desktop-file-validate apt-get; do
  command -v "$tool" >/dev/null ||
    fail "$tool is missing (scripts/setup.sh installs dpkg-dev, binutils, desktop-file-utils)"
done
[ -x "$repo/.venv/bin/python" ] || fail "no .venv (scripts/setup.sh makes it)"

work="$(mktemp -d "${TMPDIR:-/tmp}/crucible-check-deb.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# --- build -----------------------------------------------------------------------------------
step "cpack in $build"
if ! cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work/out" >"$work/cpack.log" 2>&1; then
  cat "$work/cpack.log" >&2
  fail "cpack failed"
fi
shopt -s nullglob
debs=("$work"/out/crucible_*.deb)
[ ${#debs[@]} -eq 1 ] || fail "expected one crucible_*.deb, cpack made: ${debs[*]:-none}"
deb="${debs[0]}"
step "built $(basename "$deb") ($(du -h "$deb" | cut -f1))"

# --- contents --------------------------------------------------------------------------------
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$work/files"
expected=(
  /usr/bin/crucible /usr/bin/crucible-gui /usr/bin/crucible-setup-python
  /usr/lib/crucible/libcrucible_tcl.so
  /usr/share/crucible/worker/worker.py
  /usr/share/crucible/worker/crucible_worker/__init__.py
  /usr/share/crucible/worker/triton_shim/triton/__init__.py
  /usr/share/crucible/requirements.txt
  /usr/share/crucible/resources/examples/silu_residual/reference.py
  /usr/share/crucible/resources/examples/silu_residual/candidate.py
  /usr/share/crucible/resources/tasks/index.json
  /usr/share/applications/crucible.desktop
  /usr/share/icons/hicolor/scalable/apps/crucible.svg
)
for f in "${expected[@]}"; do
  grep -qxF "$f" "$work/files" || fail "the package lacks $f"
done
outside="$(grep -v '^/usr/' "$work/files" | grep -vx '/' || true)"
[ -z "$outside" ] || fail "files outside /usr: $outside"
unwanted="$(grep -E '__pycache__|\.pyc$|crucible-model|/CMakeFiles/|\.o$|\.a$' "$work/files" || true)"
[ -z "$unwanted" ] || fail "files that do not belong in the package: $unwanted"
cmp -s "$repo/requirements.txt" <(dpkg-deb --fsys-tarfile "$deb" |
  tar -xO ./usr/share/crucible/requirements.txt) || fail "requirements.txt differs from the tree's"
step "contents: $(wc -l <"$work/files") entries, every expected file present"

root="$work/root"
dpkg-deb -x "$deb" "$root"
# No path of this machine's build or source tree in any file (RUNPATHs, scripts, resources).
# The tree's own folders, not its bare path: a short checkout path (/src) is part of others.
venv_real="$(readlink -f "$repo/.venv")"
leaks="$(grep -rlF -e "$build" -e "$venv_real" -e "$repo/.venv" -e "$repo/core" -e "$repo/app" \
  -e "$repo/ui" -e "$repo/resources" -e "$repo/cmake" -e "$repo/tests" "$root" || true)"
[ -z "$leaks" ] || fail "build or source paths inside: ${leaks//$root/}"
elves=()
while IFS= read -r -d '' f; do
  [ "$(head -c4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] && elves+=("$f")
done < <(find "$root" -type f -print0)
[ ${#elves[@]} -eq 3 ] || fail "expected 3 ELF files (crucible, crucible-gui, libcrucible_tcl), found ${#elves[@]}"
for f in "${elves[@]}"; do
  runpath="$(readelf -d "$f" | grep -E 'RPATH|RUNPATH' || true)"
  if [ -n "$runpath" ] && ! grep -q '\$ORIGIN' <<<"$runpath"; then
    fail "${f#"$root"} has an RPATH/RUNPATH outside the package: $runpath"
  fi
  missing="$(ldd "$f" | grep 'not found' || true)"
  [ -z "$missing" ] || fail "${f#"$root"} needs libraries that are not installed: $missing"
done
step "no build or source paths; no RPATH/RUNPATH; every library resolves"
desktop-file-validate "$root/usr/share/applications/crucible.desktop" ||
  fail "crucible.desktop does not validate"
python3 -c 'import sys, xml.etree.ElementTree as E
t = E.parse(sys.argv[1]).getroot()
sys.exit(0 if t.tag.endswith("}svg") else "not an SVG")' \
  "$root/usr/share/icons/hicolor/scalable/apps/crucible.svg" || fail "crucible.svg is no SVG"
step "desktop entry validates; the icon is an SVG"

# --- dependencies ----------------------------------------------------------------------------
depends="$(dpkg-deb -f "$deb" Depends)"
step "Depends: $depends"
wanted=(python3 python3-venv bubblewrap pocl-opencl-icd libqt6widgets6 libqt6charts6
        libqscintilla2-qt6-15 libsqlite3-0 libcurl4 ocl-icd-libopencl1)
# Gecode is optional at configure time (`crucible tasks synth` is off without it).
readelf -d "$root/usr/bin/crucible" | grep -q 'libgecode' && wanted+=(libgecode49)
for p in "${wanted[@]}"; do
  grep -qE "(^|[ ,|])$p( |,|$)" <<<"$depends" || fail "Depends lacks $p"
done
if apt-get install --simulate --no-install-recommends "$deb" >"$work/apt.log" 2>&1; then
  grep -qE '^Inst crucible |crucible is already the newest' "$work/apt.log" ||
    { cat "$work/apt.log" >&2; fail "apt-get --simulate did not plan to install crucible"; }
  step "apt-get install --simulate resolves: $(grep -c '^Inst ' "$work/apt.log") package(s) to install"
else
  cat "$work/apt.log" >&2
  fail "apt-get install --simulate ./$(basename "$deb") does not resolve"
fi

# --- run from the unpacked root --------------------------------------------------------------
# Only the package's own layout: no build-tree overrides, an empty data folder.
bin="$root/usr/bin"
run() {
  env -u CRUCIBLE_PYTHON -u CRUCIBLE_WORKER_DIR -u CRUCIBLE_TCL_LIB -u CRUCIBLE_RESOURCES_DIR \
    -u LD_LIBRARY_PATH XDG_DATA_HOME="$work/data" HOME="$work/home" TMPDIR="$work/tmp" \
    XDG_RUNTIME_DIR="$work/runtime" "$@"
}
mkdir -p "$work/data" "$work/home" "$work/tmp"
mkdir -m 700 "$work/runtime"
version="$(run QT_QPA_PLATFORM=offscreen "$bin/crucible-gui" --version)" ||
  fail "crucible-gui --version failed"
step "crucible-gui --version: $version"
run "$bin/crucible" tasks list --json >"$work/tasks.json" || fail "crucible tasks list failed"
tasks="$(python3 -c 'import json, sys; listed, index = (json.load(open(p)) for p in sys.argv[1:])
print(len(listed)) if len(listed) == len(index) > 0 else sys.exit(f"{len(listed)} of {len(index)}")' \
  "$work/tasks.json" "$root/usr/share/crucible/resources/tasks/index.json")" ||
  fail "crucible tasks list did not list the packaged corpus: $(head -c 300 "$work/tasks.json")"
step "crucible tasks list: the $tasks tasks of the packaged share/crucible/resources/tasks"

example="$root/usr/share/crucible/resources/examples/silu_residual"
venv="$(run "$bin/crucible-setup-python" --print)"
[ "$venv" = "$work/data/crucible/venv" ] || fail "crucible-setup-python --print says $venv"
set +e
run "$bin/crucible" verify "$example/reference.py" "$example/candidate.py" --no-db \
  >"$work/missing.out" 2>&1
status=$?
set -e
[ $status -ne 0 ] || fail "crucible verify succeeded without a Python environment"
grep -qF "run \`crucible-setup-python\` (it makes $venv)" "$work/missing.out" ||
  { cat "$work/missing.out" >&2; fail "the missing environment is not reported with its command"; }
step "without an environment: $(grep -F crucible-setup-python "$work/missing.out" | head -1)"

# The environment where crucible-setup-python puts it: this tree's .venv, so nothing downloads.
mkdir -p "$(dirname "$venv")"
ln -s "$(readlink -f "$repo/.venv")" "$venv"
set +e
run "$bin/crucible" verify "$example/reference.py" "$example/candidate.py" --backend opencl \
  --no-db --json >"$work/verify.json" 2>"$work/verify.err"
status=$?
set -e
if [ $status -ne 0 ]; then
  cat "$work/verify.err" >&2
  head -c 2000 "$work/verify.json" >&2
  fail "crucible verify on the bundled silu_residual exited $status"
fi
python3 - "$work/verify.json" <<'PY' || fail "crucible verify's result is not a verified run"
import json, sys
result = json.load(open(sys.argv[1]))
verdict, backend = result.get("verdict"), result.get("backend")
if verdict != "verified" or backend != "opencl":
    sys.exit(f"verdict {verdict!r} on {backend!r}, flags {result.get('flags')}, "
             f"error {result.get('error')}")
print(f"check_deb: crucible verify --backend opencl: {verdict}, speedup {result.get('speedup')}, "
      f"sandboxed {result.get('sandboxed')}")
PY
step "OK"
