// Where the Transformer's weights come from, by Hugging Face tensor name: a safetensors folder
// (mapped, in the checkpoint's dtype) or a GGUF file (dims reversed to torch's order, quantised
// types dequantised to float32, llama q/k rows un-permuted).
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <string>

#include "core/llm/model_folder.h"

namespace crucible::llm {

class WeightSource {
 public:
  virtual ~WeightSource() = default;
  // A CPU tensor in the Hugging Face shape, or an undefined tensor when the checkpoint has no
  // such weight. It may alias the mapped file: copy it before the source goes. "rope_freqs" is
  // the GGUF's Llama-3.1 rope divisors. Throws ModelError for a dtype that cannot be read.
  virtual at::Tensor find(const std::string& name) const = 0;
};

std::unique_ptr<WeightSource> makeWeightSource(const ModelFolder& model);

}  // namespace crucible::llm
