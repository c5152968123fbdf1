// The Decoder interface on the libtorch Transformer: the prompt once, its cache repeated for the
// n candidate rows, one batched step per token.
#pragma once

#include <memory>
#include <string>

#include "core/llm/decoder.h"
#include "core/llm/model_folder.h"

namespace crucible::llm {

// device: cpu, cuda, cuda:N; dtype: auto, float32, float16, bfloat16, or int8 / int4 (weight-only
// quantised linear layers computing in float32, CPU only). auto is float32 on the CPU except for
// a quantised GGUF (int4 for 4-bit blocks, int8 for wider ones), the checkpoint's dtype on CUDA.
// Throws ModelError for what this build or machine cannot do.
std::unique_ptr<Decoder> makeTorchDecoder(const ModelFolder& folder, const std::string& device,
                                          const std::string& dtype);

}  // namespace crucible::llm
