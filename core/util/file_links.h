#pragma once
// Putting a file at a second path: a hard link where the file system allows one (a value pack of
// gigabytes then costs nothing to place), else a copy.

#include <filesystem>
#include <system_error>

namespace crucible {

/// Places `from` at `to`, replacing what is there: a hard link when `link` and the file system
/// allows it, else a copy. The error of the copy, if that failed too.
std::error_code linkOrCopyFile(const std::filesystem::path& from, const std::filesystem::path& to,
                               bool link = true);

}  // namespace crucible
