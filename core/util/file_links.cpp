#include "core/util/file_links.h"

namespace crucible {

namespace fs = std::filesystem;

std::error_code linkOrCopyFile(const fs::path& from, const fs::path& to, bool link) {
  std::error_code ec;
  fs::remove(to, ec);
  if (link) {
    ec.clear();
    fs::create_hard_link(from, to, ec);
    if (!ec) return ec;
  }
  ec.clear();
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  return ec;
}

}  // namespace crucible
