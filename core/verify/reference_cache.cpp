#include "core/verify/reference_cache.h"

#include <cstdlib>
#include <stdexcept>

#include "core/util/file_links.h"
#include "core/util/locations.h"
#include "core/util/sha256.h"

namespace crucible {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kFolders[] = {"ref", "inputs"};

std::uintmax_t bytesUnder(const fs::path& dir) {
  std::uintmax_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_regular_file(ec)) total += it->file_size(ec);
  }
  return total;
}

/// Links (`link`; across file systems it copies) or copies `from/<folder>` into `to/<folder>`
/// for the cached folders; false on any failure.
bool linkFolders(const fs::path& from, const fs::path& to, bool link) {
  std::error_code ec;
  for (const char* folder : kFolders) {
    fs::create_directories(to / folder, ec);
    if (ec) return false;
    for (auto it = fs::recursive_directory_iterator(from / folder, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      const fs::path target = to / folder / fs::relative(it->path(), from / folder);
      if (it->is_directory(ec)) {
        fs::create_directories(target, ec);
      } else if (it->is_regular_file(ec)) {
        ec = linkOrCopyFile(it->path(), target, link);
      }
      if (ec) return false;
    }
    if (ec) return false;
  }
  return true;
}

}  // namespace

ReferenceCache::ReferenceCache(std::size_t maxEntries, std::uintmax_t maxEntryBytes,
                               std::uintmax_t maxLinkedEntryBytes)
    : maxEntries_(maxEntries),
      maxEntryBytes_(maxEntryBytes),
      maxLinkedEntryBytes_(maxLinkedEntryBytes) {
  std::string pattern = temporaryRoot() + "/crucible-refcache-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("cannot create a folder for the reference cache in " + pattern);
  }
  root_ = pattern;
}

ReferenceCache::~ReferenceCache() {
  std::error_code ec;
  fs::remove_all(root_, ec);
}

std::string ReferenceCache::keyFor(const std::string& referenceSource, const json& settings) {
  return util::sha256Hex(util::sha256Hex(referenceSource) + "\n" + settings.dump());
}

std::optional<json> ReferenceCache::restore(const std::string& key, const fs::path& jobRoot) {
  std::lock_guard lock(mutex_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->key != key) continue;
    if (!linkFolders(it->dir, jobRoot, it->linked)) return std::nullopt;
    entries_.splice(entries_.begin(), entries_, it);
    ++hits_;
    return entries_.front().facts;
  }
  return std::nullopt;
}

void ReferenceCache::keep(const std::string& key, const fs::path& jobRoot, const json& facts,
                          bool walled) {
  std::uintmax_t bytes = 0;
  for (const char* folder : kFolders) bytes += bytesUnder(jobRoot / folder);
  // Too big to copy around (or, linked, to hold on to): run it again instead.
  if (bytes > (walled ? maxLinkedEntryBytes_ : maxEntryBytes_)) return;

  std::lock_guard lock(mutex_);
  for (const auto& e : entries_) {
    if (e.key == key) return;  // another thread kept the same run first
  }
  const fs::path dir = root_ / std::to_string(serial_++);
  if (!linkFolders(jobRoot, dir, walled)) {
    std::error_code ec;
    fs::remove_all(dir, ec);
    return;
  }
  entries_.push_front({key, dir, facts, walled});
  while (entries_.size() > maxEntries_) {
    std::error_code ec;
    fs::remove_all(entries_.back().dir, ec);
    entries_.pop_back();
  }
}

std::size_t ReferenceCache::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

std::size_t ReferenceCache::hits() const {
  std::lock_guard lock(mutex_);
  return hits_;
}

}  // namespace crucible
