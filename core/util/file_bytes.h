#pragma once
// Reading a whole file into one owned buffer, sized from the file and filled by the read
// itself (no zero fill first, no growing copies): value packs run to gigabytes.

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace crucible {

/// A file's bytes, owned.
struct FileBytes {
  std::unique_ptr<std::byte[]> data;
  std::size_t size = 0;

  std::string_view view() const { return {reinterpret_cast<const char*>(data.get()), size}; }
};

/// Reads `path` whole; nullopt when it cannot be opened or read. `onBlock`, when given, sees
/// the bytes block by block in order as they arrive, while each block is still in the cache
/// (to hash a file as it is read, instead of in a second pass over memory).
std::optional<FileBytes> readFileBytes(const std::string& path,
                                       const std::function<void(std::string_view)>& onBlock = {});

}  // namespace crucible
