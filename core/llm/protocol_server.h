// crucible-model's JSON-lines protocol (docs/MODEL_PROTOCOL.md): one request per stdin line, events
// on stdout. A reader thread takes cancel at once (the running generate ends within one token
// step); other requests run in order on the calling thread. Errors are events, never exits.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>

#include "core/llm/decoder.h"
#include "core/llm/model_folder.h"

namespace crucible::llm {

// Builds the forward pass for a loaded folder; throws ModelError (or any std::exception).
using DecoderFactory = std::function<std::unique_ptr<Decoder>(
    const ModelFolder& folder, const std::string& device, const std::string& dtype)>;

// Serves until end of input or {"op":"quit"}; returns the process exit code.
int serveProtocol(std::istream& in, std::ostream& out, const DecoderFactory& factory);

}  // namespace crucible::llm
