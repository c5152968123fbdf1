#pragma once
// Reading the value packs of a job folder: the reference's as they are, the candidate's only
// when their digest is the one its worker reported (the candidate shares its folder and could
// replace a file after the worker wrote it). Packs can be read ahead of their use, several at
// once, within a memory budget.

#include <cstdint>
#include <filesystem>
#include <future>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/verify/value_pack.h"

namespace crucible {

/// One pack file of a job.
struct PackFile {
  std::filesystem::path path;
  bool candidate = false;   // written in the candidate's folder: checked against its digest
  std::uint64_t bytes = 0;  // the file's size when it was named (0: missing)
};

/// A pack as read: nullopt when missing or malformed (as good as no output), or replaced.
struct LoadedPack {
  std::optional<ValuePack> pack;
  bool replaced = false;  // a candidate file whose digest is not the reported one
  std::uint64_t bytes = 0;
};

class JobPacks {
 public:
  /// `candidateFacts`: the candidate stage's facts; without a "files" object nothing is checked.
  JobPacks(std::filesystem::path job, const nlohmann::json& candidateFacts);

  /// ref/NAME, inputs/NAME and the like, trusted.
  PackFile reference(const char* folder, const std::string& name) const;
  /// cand/NAME, checked against its digest.
  PackFile candidate(const std::string& name) const;
  /// Reads and parses one file, hashing a candidate's bytes as they are read (the bytes hashed
  /// are the bytes parsed: read once). Safe to call from several threads.
  LoadedPack load(const PackFile& file) const;

 private:
  std::filesystem::path job_;
  std::optional<nlohmann::json> digests_;
};

/// Files consumed in order, each read ahead on its own thread as soon as it fits in `budget`
/// bytes beside what is still held; the next one is always read, whatever it costs.
class LoadAhead {
 public:
  /// `held`: the bytes already held when it starts (counted against the budget until released).
  LoadAhead(const JobPacks& packs, std::vector<PackFile> files, std::uint64_t budget,
            std::uint64_t held);
  LoadAhead(const LoadAhead&) = delete;
  LoadAhead& operator=(const LoadAhead&) = delete;

  /// The next file's pack; its bytes count against the budget until release().
  LoadedPack next();
  /// `bytes` no longer held (a pack dropped); reads further ahead if they now fit.
  void release(std::uint64_t bytes);

 private:
  void startWhatFits();

  const JobPacks& packs_;
  std::vector<PackFile> files_;
  // Declared after what the reads use: std::async's futures wait for their reads when
  // destroyed, so an exception never leaves a read running on freed memory.
  std::vector<std::future<LoadedPack>> loads_;
  std::size_t started_ = 0, taken_ = 0;
  std::uint64_t budget_, inUse_;
};

}  // namespace crucible
