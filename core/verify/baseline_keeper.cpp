#include "core/verify/baseline_keeper.h"

#include <algorithm>
#include <condition_variable>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "core/util/file_links.h"

namespace crucible {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// A kept timer lives as long as its keeper lets it; this only bounds a process that nobody
// ends (the keeper's idle limit and every session's own limit come first).
constexpr double kLifetimeSeconds = 24 * 3600.0;

double secondsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

/// One `baseline` process and the session it is in. Its channel messages arrive on its own
/// thread; turn messages of the session opened last go to that session's referee, the session's
/// facts end it.
class KeptBaseline {
 public:
  KeptBaseline(const BaselineSpec& spec, TurnReferee& referee)
      : key_(spec.key),
        worker_(spec.worker),
        dir_({"src-ref", "inputs", "baseline"}),
        feed_(std::make_shared<proc::StdinFeed>()),
        runner_(worker_, dir_, spec.backend, spec.tclLibrary, stop_.get_token(),
                spec.openclDevice) {
    writeFile(dir_ / "src-ref" / "reference.py", spec.referenceSource);
    linkTimingSets(spec.inputsDir, dir_ / "inputs");
    json job = spec.job;
    job["reference_path"] = (dir_ / "src-ref" / "reference.py").string();
    job["inputs_dir"] = (dir_ / "inputs").string();
    job["kept"] = true;
    attachLocked(referee);
    StageHooks hooks{feed_,
                     [this](const json& m) { onMessage(m); },
                     [this](int group) { onStarted(group); },
                     {}};
    thread_ = std::thread([this, job, hooks, memory = spec.memoryBytes] {
      StageResult result;
      try {
        result = runner_.run("baseline", job, dir_ / "baseline",
                             {(dir_ / "src-ref").string(), (dir_ / "inputs").string()},
                             {(dir_ / "baseline").string()}, kLifetimeSeconds, memory, hooks);
      } catch (const std::exception& e) {
        result.execution.launchFailed = true;
        result.execution.launchError = e.what();
      }
      std::scoped_lock lock(mutex_);
      exit_ = std::move(result.execution);
      dead_ = true;
      detachLocked();
      changed_.notify_all();
    });
  }

  ~KeptBaseline() {
    // The end of the grant stream ends an idle timer; one in a session is ended outright.
    feed_->close();
    {
      std::unique_lock lock(mutex_);
      if (!changed_.wait_for(lock, std::chrono::seconds(5), [this] { return dead_; })) {
        stop_.request_stop();
      }
    }
    thread_.join();
  }
  KeptBaseline(const KeptBaseline&) = delete;
  KeptBaseline& operator=(const KeptBaseline&) = delete;

  const std::string& key() const { return key_; }
  Clock::time_point lastUsed() const {
    std::scoped_lock lock(mutex_);
    return lastUsed_;
  }
  /// Alive, in no session, and its last session gave facts without an error.
  bool idle() const {
    std::scoped_lock lock(mutex_);
    return idleLocked();
  }

  /// Opens the next session for `referee`; false (nothing opened) when the timer is no longer
  /// idle, e.g. its process ended since it was last looked at.
  bool attach(TurnReferee& referee) {
    std::scoped_lock lock(mutex_);
    if (!idleLocked()) return false;
    ++session_;
    attachLocked(referee);
    feed_->write("n");
    return true;
  }

  /// No turns for this session: the timer is told (`a` in place of the first grant) and the
  /// referee let go at once; the session's facts, when they come, are not waited for.
  void abandon() {
    std::scoped_lock lock(mutex_);
    if (referee_ == nullptr) return;
    abandoned_ = true;
    detachLocked();
    feed_->write("a");
    changed_.notify_all();
  }

  /// Ends the process now.
  void end() { stop_.request_stop(); }

  /// Waits until the session's facts came, the process ended or `deadline` passed (then it is
  /// ended); returns the session's facts (null if none) and times.
  StageResult finish(Clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    auto settled = [this] { return facts_.has_value() || dead_ || referee_ == nullptr; };
    if (!changed_.wait_until(lock, deadline, settled)) {
      lock.unlock();
      end();
      lock.lock();
      changed_.wait(lock, [this] { return dead_; });
    }
    detachLocked();
    StageResult result;
    result.facts = facts_.value_or(json());
    // An abandoned session's facts may still be on their way (a first session that is still
    // compiling): the timer stays until a session of its own says otherwise.
    healthy_ = !dead_ && (abandoned_ ||
                          (facts_.has_value() && result.facts.value("error", json()).is_null()));
    if (dead_) {
      result.execution = exit_;
    } else {
      result.execution.exitCode = 0;  // alive, and kept for the next session
    }
    const std::string stage = session_ == 0 ? "baseline" : "baseline (kept)";
    const Clock::time_point end = factsAt_.value_or(Clock::now());
    result.times.push_back({stage, secondsBetween(sessionStart_, end)});
    for (std::size_t i = 0; i < phases_.size(); ++i) {
      const auto until = i + 1 < phases_.size() ? phases_[i + 1].second : end;
      result.times.push_back(
          {stage + "/" + phases_[i].first, secondsBetween(phases_[i].second, until)});
    }
    lastUsed_ = Clock::now();
    return result;
  }

 private:
  static void linkTimingSets(const fs::path& from, const fs::path& to) {
    for (const auto& entry : fs::directory_iterator(from)) {
      const std::string name = entry.path().filename().string();
      if (!entry.is_regular_file() || name.rfind("timing_", 0) != 0) continue;
      if (const auto ec = linkOrCopyFile(entry.path(), to / name)) {
        throw fs::filesystem_error("cannot give the reference's timer its timing sets",
                                   entry.path(), ec);
      }
    }
  }

  bool idleLocked() const { return !dead_ && referee_ == nullptr && healthy_; }

  void attachLocked(TurnReferee& referee) {
    referee_ = &referee;
    referee.adoptReferenceFeed(feed_);
    if (group_ > 0) referee.started(TimingSide::Reference, group_);
    facts_.reset();
    factsAt_.reset();
    abandoned_ = false;
    sessionStart_ = Clock::now();
    phases_.clear();
    if (session_ == 0) phases_.emplace_back("startup", sessionStart_);
  }

  void detachLocked() {
    if (referee_ != nullptr) referee_->finished(TimingSide::Reference);
    referee_ = nullptr;
  }

  void onStarted(int group) {
    std::scoped_lock lock(mutex_);
    group_ = group;
    if (referee_ != nullptr) referee_->started(TimingSide::Reference, group);
  }

  /// Messages of an earlier session (one that was abandoned) are not this session's.
  void onMessage(const json& message) {
    const std::string type = message.value("type", "");
    const json session = message.value("session", json());
    std::scoped_lock lock(mutex_);
    if (!ofThisSession(type, session, message)) return;
    if (type == "turn" && referee_ != nullptr) referee_->message(TimingSide::Reference, message);
    if (type == "phase") phases_.emplace_back(message.value("name", "?"), Clock::now());
    if (type == "facts") {
      facts_ = message.value("facts", json());
      factsAt_ = Clock::now();
      detachLocked();
      changed_.notify_all();
    }
  }

  /// With mutex_ held. Facts say their session inside; the first session's early phases (load,
  /// compile) say none.
  bool ofThisSession(const std::string& type, const json& session, const json& message) const {
    if (session.is_number_integer()) return session.get<int>() == session_;
    if (type == "facts") {
      const json& facts = message.value("facts", json());
      return facts.is_object() && facts.value("session", -1) == session_;
    }
    return session_ == 0;
  }

  std::string key_;
  WorkerLocation worker_;
  JobDir dir_;
  std::shared_ptr<proc::StdinFeed> feed_;
  std::stop_source stop_;
  StageRunner runner_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  TurnReferee* referee_ = nullptr;  // the open session's, until its facts come
  int session_ = 0;                 // the session opened last
  int group_ = 0;
  bool dead_ = false;
  bool healthy_ = false;
  bool abandoned_ = false;
  proc::ExecutionResult exit_;
  std::optional<json> facts_;
  std::optional<Clock::time_point> factsAt_;
  Clock::time_point sessionStart_, lastUsed_ = Clock::now();
  std::vector<std::pair<std::string, Clock::time_point>> phases_;
  std::thread thread_;  // last: started once everything above exists
};

namespace {

/// What a verification's stop does to its timer: ends it (a kept one is then not kept).
std::function<void()> endsOnStop(std::shared_ptr<KeptBaseline> timer) {
  return [timer = std::move(timer)] { timer->end(); };
}

}  // namespace

BaselineSession::BaselineSession(std::shared_ptr<KeptBaseline> timer,
                                 std::shared_ptr<BaselineKeeper> keeper, std::stop_token stop)
    : timer_(std::move(timer)), keeper_(std::move(keeper)), onStop_(stop, endsOnStop(timer_)) {}

BaselineSession::~BaselineSession() {
  if (done_) return;
  // Left unfinished (the verification failed around it): its referee is going away, so the
  // process is ended and its session settled before this returns.
  timer_->end();
  timer_->finish(Clock::now() + std::chrono::seconds(30));
  if (keeper_) keeper_->release(timer_);
}

void BaselineSession::abandon() {
  if (keeper_) {
    timer_->abandon();
  } else {
    timer_->end();
  }
}

StageResult BaselineSession::finish(double limitSeconds) {
  const auto deadline =
      Clock::now() + std::chrono::milliseconds(static_cast<long long>(limitSeconds * 1000));
  StageResult result = timer_->finish(deadline);
  done_ = true;
  if (keeper_) keeper_->release(timer_);
  return result;
}

BaselineKeeper::BaselineKeeper(std::size_t maxKept, std::chrono::seconds idleLimit)
    : maxKept_(maxKept), idleLimit_(idleLimit) {
  // Idle timers hold memory (a GPU's too): they are ended once idle too long, whether or not
  // another verification comes.
  const auto every = std::max<std::chrono::milliseconds>(std::chrono::seconds(1), idleLimit_ / 4);
  reaper_ = std::jthread([this, every](std::stop_token stop) {
    std::unique_lock lock(mutex_);
    while (!stop.stop_requested()) {
      reap_.wait_for(lock, stop, every, [] { return false; });
      Timers ended = expireIdle();
      lock.unlock();
      ended.clear();
      lock.lock();
    }
  });
}

BaselineKeeper::~BaselineKeeper() {
  reaper_.request_stop();
  reaper_.join();
  // Nobody asks a kept timer for another session now: each is ended outright rather than told
  // to finish, so a keeper destroyed on a window's thread (the workbench closing) never waits
  // for a stuck timer's grace period.
  std::scoped_lock lock(mutex_);
  for (const auto& timer : timers_) timer->end();
}

std::unique_ptr<BaselineSession> BaselineKeeper::open(const BaselineSpec& spec,
                                                      TurnReferee& referee, std::stop_token stop) {
  if (spec.key.empty()) return openOnce(spec, referee, stop);
  std::shared_ptr<KeptBaseline> timer;
  Timers ended;
  {
    std::scoped_lock lock(mutex_);
    ended = expireIdle();
    auto found = std::find_if(timers_.begin(), timers_.end(),
                              [&](const auto& t) { return t->key() == spec.key && t->idle(); });
    if (found != timers_.end()) {
      std::shared_ptr<KeptBaseline> kept = *found;
      timers_.erase(found);
      if (kept->attach(referee)) {
        timer = std::move(kept);
      } else {
        ended.push_back(std::move(kept));
      }
    }
  }
  if (!timer) timer = std::make_shared<KeptBaseline>(spec, referee);
  std::scoped_lock lock(mutex_);
  timers_.push_front(timer);
  return std::make_unique<BaselineSession>(timer, shared_from_this(), stop);
}

std::unique_ptr<BaselineSession> BaselineKeeper::openOnce(const BaselineSpec& spec,
                                                          TurnReferee& referee,
                                                          std::stop_token stop) {
  return std::make_unique<BaselineSession>(std::make_shared<KeptBaseline>(spec, referee), nullptr,
                                           stop);
}

void BaselineKeeper::release(const std::shared_ptr<KeptBaseline>& timer) {
  Timers ended;  // ended (destroyed) outside the lock
  std::scoped_lock lock(mutex_);
  std::size_t idle = 0;  // beyond maxKept_ idle timers, the least recently used go
  ended = takeWhere([&](const KeptBaseline& t) {
    return (&t == timer.get() && !t.idle()) || (t.idle() && ++idle > maxKept_);
  });
  ended.splice(ended.end(), expireIdle());
}

BaselineKeeper::Timers BaselineKeeper::expireIdle() {
  const auto now = Clock::now();
  return takeWhere(
      [&](const KeptBaseline& t) { return t.idle() && now - t.lastUsed() > idleLimit_; });
}

BaselineKeeper::Timers BaselineKeeper::takeWhere(
    const std::function<bool(const KeptBaseline&)>& taken) {
  Timers out;
  for (auto it = timers_.begin(); it != timers_.end();) {
    if (taken(**it)) {
      out.push_back(*it);
      it = timers_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

}  // namespace crucible
