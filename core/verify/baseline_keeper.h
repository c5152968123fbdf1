#pragma once
// The reference's timer (the `baseline` stage) kept alive between the verifications of one
// reference. Its imports and torch.compile cost more than everything else a verification with
// a reused reference does, and they depend only on what the key holds: the reference, its
// settings and the run that wrote its timing sets. A kept timer times each later candidate's
// rounds in a session of its own (docs/WORKER_PROTOCOL.md, "Kept baseline"); a timer that
// cannot be kept (no key) is the same process, ended after its one session.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stop_token>
#include <string>
#include <thread>

#include "core/util/locations.h"
#include "core/verify/timing_turns.h"
#include "core/verify/worker_stage.h"

namespace crucible {

/// Everything one reference's timer is started from.
struct BaselineSpec {
  WorkerLocation worker;
  std::string backend;
  std::string tclLibrary;
  std::string openclDevice;
  std::string referenceSource;
  std::filesystem::path inputsDir;  // the reference stage's timing sets (timing_J.ctp)
  nlohmann::json job;               // the stage's job without its paths (seed, timing, ...)
  std::uint64_t memoryBytes = 0;
  // What a later verification must match to reuse the timer; empty: it is never reused.
  std::string key;
};

class KeptBaseline;
class BaselineKeeper;

/// One verification's turn on a timer: opened beside the candidate's stage, answered by the
/// verification's referee, finished when the candidate's stage has ended.
class BaselineSession {
 public:
  /// `timer` is attached to the session's referee already; `keeper` null: a timer no keeper
  /// keeps.
  BaselineSession(std::shared_ptr<KeptBaseline> timer, std::shared_ptr<BaselineKeeper> keeper,
                  std::stop_token stop);
  ~BaselineSession();
  BaselineSession(const BaselineSession&) = delete;
  BaselineSession& operator=(const BaselineSession&) = delete;

  /// The candidate never asked for a turn: no rounds are timed. A timer that is kept finishes
  /// the session on its own time; one that is not is ended.
  void abandon();
  /// Waits (at most `limitSeconds`) for the session's facts and returns them with its times;
  /// facts are null when the process ended, or was ended, without them.
  StageResult finish(double limitSeconds);

 private:
  std::shared_ptr<KeptBaseline> timer_;
  std::shared_ptr<BaselineKeeper> keeper_;
  std::stop_callback<std::function<void()>> onStop_;
  bool done_ = false;
};

/// The timers kept for later candidates, shared by the verifications of one host (generation,
/// benchmarks, the workbench). Thread-safe.
class BaselineKeeper : public std::enable_shared_from_this<BaselineKeeper> {
 public:
  /// Keeps at most `maxKept` idle timers, each for at most `idleLimit` after its last session.
  explicit BaselineKeeper(std::size_t maxKept = 1,
                          std::chrono::seconds idleLimit = std::chrono::seconds(600));
  ~BaselineKeeper();
  BaselineKeeper(const BaselineKeeper&) = delete;
  BaselineKeeper& operator=(const BaselineKeeper&) = delete;

  /// A session on the idle timer kept under `spec.key`, else on a new one (kept afterwards
  /// when the key is not empty).
  std::unique_ptr<BaselineSession> open(const BaselineSpec& spec, TurnReferee& referee,
                                        std::stop_token stop);
  /// A session on a new timer that no keeper keeps.
  static std::unique_ptr<BaselineSession> openOnce(const BaselineSpec& spec, TurnReferee& referee,
                                                   std::stop_token stop);

 private:
  friend class BaselineSession;
  using Timers = std::list<std::shared_ptr<KeptBaseline>>;
  void release(const std::shared_ptr<KeptBaseline>& timer);  // its session has ended
  // With mutex_ held; the caller ends what they return after letting go of it.
  Timers expireIdle();
  Timers takeWhere(const std::function<bool(const KeptBaseline&)>& taken);

  std::size_t maxKept_;
  std::chrono::seconds idleLimit_;
  mutable std::mutex mutex_;
  std::condition_variable_any reap_;
  Timers timers_;        // most recently used first
  std::jthread reaper_;  // last: stopped before the rest goes
};

}  // namespace crucible
