#!/usr/bin/env python3
"""Converts a tiny Hugging Face folder (make_tiny_models.py) to one GGUF file at test time, the way
llama.cpp's convert_hf_to_gguf.py does for Llama, Qwen2 and Qwen3 (that script is not in the `gguf`
package; this follows it with the package's own writer, tensor-name map, SpecialVocab and
quantisers):

  * metadata: <arch>.block_count, context_length, embedding_length, feed_forward_length,
    attention.head_count(_kv), attention.key_length (when head_dim is set), rope.freq_base,
    attention.layer_norm_rms_epsilon; tokenizer.ggml.* from tokenizer.json (get_vocab_base:
    added special tokens CONTROL, other added tokens USER_DEFINED, ids without a token UNUSED
    "[PAD<i>]"), merges, bos/eos and the chat template from SpecialVocab;
  * Llama q_proj/k_proj rows permuted (LlamaModel.permute) and Llama-3.1 rope scaling written as
    the rope_freqs tensor (LlamaModel.generate_extra_tensors);
  * 2-D weights as F32, F16 or Q8_0 (and Q4_0/Q4_1/Q5_0/Q5_1), 1-D ones F32, as llama.cpp does.

usage: convert_to_gguf.py HF_FOLDER OUT.gguf TYPE PRE   (TYPE: F32 F16 Q8_0 ...; PRE: llama-bpe,
qwen2, smollm, ...: tokenizer.ggml.pre, which llama.cpp picks by hashing the tokenizer's output)
"""
import json
import math
import pathlib
import sys

import numpy as np
import torch
from safetensors.torch import load_file

import gguf
from gguf import GGMLQuantizationType as T

ARCHS = {"LlamaForCausalLM": gguf.MODEL_ARCH.LLAMA, "Qwen2ForCausalLM": gguf.MODEL_ARCH.QWEN2,
         "Qwen3ForCausalLM": gguf.MODEL_ARCH.QWEN3}


def permute(weights, n_head, n_head_kv):
    """convert_hf_to_gguf.py's LlamaModel.permute."""
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    return (weights.reshape(n_head, 2, weights.shape[0] // n_head // 2, *weights.shape[1:])
            .swapaxes(1, 2).reshape(weights.shape))


def rope_factors(hp):
    """convert_hf_to_gguf.py's Llama-3.1 rope_freqs: the divisor of each inverse frequency."""
    rs = hp["rope_scaling"]
    dim = hp.get("head_dim") or hp["hidden_size"] // hp["num_attention_heads"]
    freqs = 1.0 / (hp.get("rope_theta", 10000.0) ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    factor, low, high = rs.get("factor", 8.0), rs.get("low_freq_factor", 1.0), rs.get("high_freq_factor", 4.0)
    old = rs.get("original_max_position_embeddings", 8192)
    out = []
    for freq in freqs.tolist():
        wavelen = 2 * math.pi / freq
        if wavelen < old / high:
            out.append(1.0)
        elif wavelen > old / low:
            out.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


def tokens_and_types(folder, vocab_size):
    """convert_hf_to_gguf.py's get_vocab_base, from tokenizer.json alone."""
    tj = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    reverse = {i: t for t, i in tj["model"]["vocab"].items()}
    added = {a["id"]: a for a in tj.get("added_tokens", [])}
    tokens, types = [], []
    for i in range(vocab_size):
        if i in added:
            tokens.append(added[i]["content"])
            types.append(gguf.TokenType.CONTROL if added[i]["special"] else gguf.TokenType.USER_DEFINED)
        elif i in reverse:
            tokens.append(reverse[i])
            types.append(gguf.TokenType.NORMAL)
        else:
            tokens.append(f"[PAD{i}]")
            types.append(gguf.TokenType.UNUSED)
    return tokens, types


def convert(folder, out, qtype="F32", pre="llama-bpe"):
    folder, out = pathlib.Path(folder), pathlib.Path(out)
    hp = json.loads((folder / "config.json").read_text())
    arch = ARCHS[hp["architectures"][0]]
    name = gguf.MODEL_ARCH_NAMES[arch]
    n_head, n_kv = hp["num_attention_heads"], hp.get("num_key_value_heads", hp["num_attention_heads"])
    writer = gguf.GGUFWriter(str(out), name)
    writer.add_block_count(hp["num_hidden_layers"])
    writer.add_context_length(hp["max_position_embeddings"])
    writer.add_embedding_length(hp["hidden_size"])
    writer.add_feed_forward_length(hp["intermediate_size"])
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_kv)
    writer.add_rope_freq_base(hp.get("rope_theta", 10000.0))
    writer.add_layer_norm_rms_eps(hp["rms_norm_eps"])
    if hp.get("head_dim"):
        writer.add_key_length(hp["head_dim"])
        writer.add_value_length(hp["head_dim"])
    writer.add_vocab_size(hp["vocab_size"])
    tokens, types = tokens_and_types(folder, hp["vocab_size"])
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre(pre)
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    gguf.SpecialVocab(folder, load_merges=True, n_vocab=len(tokens)).add_to_gguf(writer)

    names = gguf.get_tensor_name_map(arch, hp["num_hidden_layers"])
    state = {}
    for f in sorted(folder.glob("*.safetensors")):
        state.update(load_file(str(f)))
    kind = T[qtype]
    for hf_name, tensor in state.items():
        data = tensor.to(torch.float32)
        if arch == gguf.MODEL_ARCH.LLAMA and hf_name.endswith(("q_proj.weight", "q_proj.bias")):
            data = permute(data, n_head, n_head)
        if arch == gguf.MODEL_ARCH.LLAMA and hf_name.endswith(("k_proj.weight", "k_proj.bias")):
            data = permute(data, n_head, n_kv)
        gname = names.get_name(hf_name, try_suffixes=(".weight", ".bias"))
        array = data.numpy()
        if array.ndim == 1 or kind == T.F32:
            writer.add_tensor(gname, array)
        elif kind == T.F16:
            writer.add_tensor(gname, array.astype(np.float16))
        else:
            writer.add_tensor(gname, gguf.quants.quantize(array, kind), raw_dtype=kind)
    if arch == gguf.MODEL_ARCH.LLAMA and (hp.get("rope_scaling") or {}).get("rope_type") == "llama3":
        writer.add_tensor(gguf.TENSOR_NAMES[gguf.MODEL_TENSOR.ROPE_FREQS] + ".weight", rope_factors(hp))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return out


if __name__ == "__main__":
    convert(*sys.argv[1:5])
