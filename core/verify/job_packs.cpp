#include "core/verify/job_packs.h"

#include <algorithm>
#include <stdexcept>

#include "core/util/file_bytes.h"
#include "core/util/sha256.h"

namespace crucible {

namespace fs = std::filesystem;

JobPacks::JobPacks(fs::path job, const nlohmann::json& candidateFacts) : job_(std::move(job)) {
  if (candidateFacts.is_object() && candidateFacts.contains("files") &&
      candidateFacts["files"].is_object()) {
    digests_ = candidateFacts["files"];
  }
}

namespace {
PackFile named(fs::path path, bool candidate) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  return {std::move(path), candidate, ec ? 0 : static_cast<std::uint64_t>(size)};
}
}  // namespace

PackFile JobPacks::reference(const char* folder, const std::string& name) const {
  return named(job_ / folder / name, false);
}

PackFile JobPacks::candidate(const std::string& name) const {
  return named(job_ / "cand" / name, true);
}

LoadedPack JobPacks::load(const PackFile& file) const {
  LoadedPack out;
  out.bytes = file.bytes;
  const std::string path = file.path.string();
  const std::string name = file.path.filename().string();
  const bool check = file.candidate && digests_;
  util::Sha256 hasher;
  auto bytes = readFileBytes(path, [&](std::string_view block) {
    if (check) hasher.update(block);
  });
  if (!bytes) return out;
  if (check) {
    const bool known = digests_->contains(name) && (*digests_)[name].is_string();
    if (!known || (*digests_)[name].get<std::string>() != util::Sha256::hex(hasher.finish())) {
      out.replaced = true;
      return out;
    }
  }
  try {
    out.pack = ValuePack::parse(std::move(*bytes), path);
  } catch (const ValuePackError&) {
    // a malformed pack is as good as no output
  }
  return out;
}

LoadAhead::LoadAhead(const JobPacks& packs, std::vector<PackFile> files, std::uint64_t budget,
                     std::uint64_t held)
    : packs_(packs), files_(std::move(files)), budget_(budget), inUse_(held) {
  loads_.resize(files_.size());
  startWhatFits();
}

void LoadAhead::startWhatFits() {
  while (started_ < files_.size() &&
         (started_ == taken_ || inUse_ + files_[started_].bytes <= budget_)) {
    inUse_ += files_[started_].bytes;
    const PackFile* file = &files_[started_];
    loads_[started_] = std::async(std::launch::async, [this, file] { return packs_.load(*file); });
    ++started_;
  }
}

LoadedPack LoadAhead::next() {
  if (taken_ == files_.size()) throw std::logic_error("LoadAhead::next: no file left");
  startWhatFits();  // the next one at least
  return loads_[taken_++].get();
}

void LoadAhead::release(std::uint64_t bytes) {
  inUse_ -= std::min(inUse_, bytes);
  startWhatFits();
}

}  // namespace crucible
