// A model from one GGUF file (llama.cpp's format), turned into what a Hugging Face folder gives:
//   config     from <arch>.* metadata (llama, qwen2, qwen3): block_count, embedding_length,
//              feed_forward_length, attention.head_count(_kv), attention.key_length,
//              context_length, rope.freq_base, rope.scaling.*, attention.layer_norm_rms_epsilon;
//              q/k/v bias and the tied head from which tensors exist.
//   tokenizer  from tokenizer.ggml.* (model gpt2: byte-level BPE): tokens, merges, token_type
//              (control tokens are special added tokens, user-defined ones plain added tokens),
//              the pre-tokenizer name (llama.cpp's names: llama-bpe, qwen2, smollm, gpt-2, ...)
//              mapped to the split patterns of pretokenizer.h, add_bos_token.
//   template   tokenizer.chat_template, detected as for a folder (ChatML or Llama-3).
//   stop ids   eos, eot and eom token ids, and the chat format's end-of-turn token.
// Tensor names map to Hugging Face's (huggingFaceTensorName); dims are stored innermost first
// and reversed for torch; llama-architecture q/k rows are un-permuted (unpermuteQueryKey).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/llm/model_folder.h"

namespace crucible::llm {

class GgufFile;

// Throws ModelError naming the file and the key or tensor at fault.
ModelFolder openGgufModel(const std::filesystem::path& file);

// "blk.3.attn_q.weight" -> "model.layers.3.self_attn.q_proj.weight"; nullopt for a name without
// a Hugging Face counterpart (rope_freqs.weight: llama.cpp's precomputed Llama-3.1 rope factors).
std::optional<std::string> huggingFaceTensorName(std::string_view ggufName);

// llama.cpp's converter permutes the rows of q_proj / k_proj (weights and biases) of llama models
// so that its interleaved rope equals Hugging Face's rotate_half one (convert_hf_to_gguf.py,
// LlamaModel.permute): rows [head, 2, dim/2] were swapped to [head, dim/2, 2]. This undoes it in
// place on a row-major [rows, columns] float tensor of `heads` heads.
void unpermuteQueryKey(float* data, std::int64_t rows, std::int64_t columns, std::int64_t heads);

}  // namespace crucible::llm
