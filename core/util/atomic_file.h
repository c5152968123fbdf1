#pragma once
// Writing a file whole or not at all: the text goes to a temporary file next to the target,
// which is then renamed over it, so an interrupted run never leaves half a file.

#include <filesystem>
#include <string>

namespace crucible {

/// Throws std::runtime_error naming the file when it cannot be written.
void writeFileAtomically(const std::filesystem::path& path, const std::string& text);

}  // namespace crucible
