#pragma once
// The reference stage's results kept across candidates of one task. Generation and benchmarks
// verify many candidates against the same reference; running the reference again for each costs
// seconds. With a cache the reference's run (its inputs, expected outputs and timing sets) is made
// once per (reference text, backend, device, seed, trials, timing settings). Its time is not
// cached: the baseline stage measures it again beside each candidate, in turns, so that both
// meet the same load.
//
// Entries are the job's `ref/` and `inputs/` folders in a private folder, put back into each new
// job. Where the stages' walls held (bubblewrap, or Landlock and seccomp), they are hard links:
// no stage writes these files after the reference stage (the candidate sees neither folder, and
// its own copy of the inputs is removed before its code exists), so a run of gigabytes costs no
// more to keep and restore than a small one. Without walls they are copies, so a candidate that
// writes into its job's files changes only its own job, never a later candidate's.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <list>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace crucible {

class ReferenceCache {
 public:
  /// Keeps at most `maxEntries` runs and skips runs whose files exceed `maxEntryBytes` (copied)
  /// or `maxLinkedEntryBytes` (linked: only the disk they hold on to counts).
  explicit ReferenceCache(std::size_t maxEntries = 8,
                          std::uintmax_t maxEntryBytes = std::uintmax_t{2} << 30,
                          std::uintmax_t maxLinkedEntryBytes = std::uintmax_t{16} << 30);
  ~ReferenceCache();
  ReferenceCache(const ReferenceCache&) = delete;
  ReferenceCache& operator=(const ReferenceCache&) = delete;

  /// The key of one reference run: a digest of everything the run depends on.
  static std::string keyFor(const std::string& referenceSource, const nlohmann::json& settings);

  /// Copies a kept run's folders into `jobRoot` (its `ref/` and `inputs/`) and returns its
  /// facts; nullopt when there is none (or it could not be copied).
  std::optional<nlohmann::json> restore(const std::string& key,
                                        const std::filesystem::path& jobRoot);

  /// Keeps the run in `jobRoot` under `key`, evicting the oldest run beyond the limit; linked
  /// when `walled` (the stages' walls held on this machine), else copied.
  void keep(const std::string& key, const std::filesystem::path& jobRoot,
            const nlohmann::json& facts, bool walled = false);

  std::size_t size() const;
  std::size_t hits() const;

 private:
  struct Entry {
    std::string key;
    std::filesystem::path dir;
    nlohmann::json facts;
    bool linked = false;
  };
  std::filesystem::path root_;
  std::size_t maxEntries_;
  std::uintmax_t maxEntryBytes_;
  std::uintmax_t maxLinkedEntryBytes_;
  mutable std::mutex mutex_;
  std::list<Entry> entries_;  // most recently used first
  std::size_t hits_ = 0;
  std::size_t serial_ = 0;
};

}  // namespace crucible
