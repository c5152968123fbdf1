#include "core/verify/timing_turns.h"

#include <signal.h>

#include <algorithm>

#include "core/proc/cpu_pressure.h"

namespace crucible {

using nlohmann::json;

namespace {

TimingSide other(TimingSide side) {
  return side == TimingSide::Reference ? TimingSide::Candidate : TimingSide::Reference;
}

const char* nameOf(TimingSide side) {
  return side == TimingSide::Reference ? "reference" : "candidate";
}

constexpr std::size_t kMaxProtocolErrors = 16;

}  // namespace

TurnReferee::TurnReferee() : origin_(std::chrono::steady_clock::now()) {
  for (auto& side : sides_) side.feed = std::make_shared<proc::StdinFeed>();
}

TurnReferee::~TurnReferee() {
  // Never leave the candidate's processes stopped, whatever ended the run.
  std::scoped_lock lock(mutex_);
  pauseCandidate(false);
}

std::shared_ptr<proc::StdinFeed> TurnReferee::feed(TimingSide side) const {
  return sides_[static_cast<int>(side)].feed;
}

void TurnReferee::adoptReferenceFeed(std::shared_ptr<proc::StdinFeed> feed) {
  std::scoped_lock lock(mutex_);
  Side& s = of(TimingSide::Reference);
  s.feed = std::move(feed);
  s.feedKept = true;
}

void TurnReferee::started(TimingSide side, int processGroup) {
  std::scoped_lock lock(mutex_);
  of(side).group = processGroup;
}

void TurnReferee::message(TimingSide side, const json& message) {
  if (!message.is_object() || message.value("type", "") != "turn") return;
  const auto state = message.value("state", "");
  const json index = message.value("index", json());
  std::scoped_lock lock(mutex_);
  Side& s = of(side);
  auto broken = [&](const std::string& what) {
    if (protocolErrors_.size() < kMaxProtocolErrors) {
      protocolErrors_.push_back(std::string(nameOf(side)) + ": " + what);
    }
  };
  if (!index.is_number_integer()) return broken("a turn message without a turn number");
  if (s.finished) return;
  if (state == "ready") {
    if (holder_ == side || s.waiting)
      return broken("asked for a turn while holding or awaiting one");
    s.waiting = index.get<int>();
    s.asked = true;
    updateHeld(s);
  } else if (state == "done") {
    if (holder_ != side) return broken("said a turn was done that it was not given");
    endTurn(side);
    next_ = other(side);
  } else {
    return broken("an unknown turn state '" + state + "'");
  }
  grantIfDue();
}

void TurnReferee::finished(TimingSide side) {
  std::scoped_lock lock(mutex_);
  Side& s = of(side);
  s.finished = true;
  s.waiting.reset();
  updateHeld(s);
  if (holder_ == side) endTurn(side);
  if (side == TimingSide::Candidate) s.paused = false;  // its group is gone
  if (!s.feedKept) s.feed->close();
  grantIfDue();
}

bool TurnReferee::candidateAsked() const {
  std::scoped_lock lock(mutex_);
  return sides_[static_cast<int>(TimingSide::Candidate)].asked;
}

json TurnReferee::log() const {
  std::scoped_lock lock(mutex_);
  json turns = json::array();
  double timed = 0;
  double stalled = 0;
  bool measured = !turns_.empty();
  for (const auto& t : turns_) {
    const bool ended = t.end >= t.start;
    const bool read = t.stalledAtStart && t.stalledAtEnd && *t.stalledAtEnd >= *t.stalledAtStart;
    json stall;
    if (ended && read) {
      const double seconds = static_cast<double>(*t.stalledAtEnd - *t.stalledAtStart) / 1e6;
      stall = seconds;
      timed += t.end - t.start;
      stalled += seconds;
    }
    measured = measured && (read || !ended);  // a turn still running is not counted yet
    turns.push_back({{"side", nameOf(t.side)},
                     {"index", t.index},
                     {"start_s", t.start},
                     {"end_s", ended ? json(t.end) : json()},
                     {"cpu_stalled_s", stall}});
  }
  json pressure;
  if (measured && timed > 0) {
    pressure = {{"stalled_s", stalled},
                {"timed_s", timed},
                {"fraction", std::min(1.0, stalled / timed)},
                {"source", "/proc/pressure/cpu (some)"}};
  }
  return {{"turns", std::move(turns)},
          {"protocol_errors", protocolErrors_},
          {"cpu_pressure", pressure}};
}

void TurnReferee::grantIfDue() {
  if (holder_) return;
  const Side& nextSide = of(next_);
  const Side& otherSide = of(other(next_));
  if (nextSide.waiting) {
    // The first turn waits until both sides are ready (or one is gone): the rounds that are
    // compared should be as close together as the two stages allow.
    if (turns_.empty() && !otherSide.waiting && !otherSide.finished) return;
    grant(next_);
  } else if (nextSide.finished && otherSide.waiting) {
    grant(other(next_));
  }
}

void TurnReferee::grant(TimingSide side) {
  Side& s = of(side);
  if (side == TimingSide::Reference) pauseCandidate(true);
  turns_.push_back({side, *s.waiting, now(), -1, proc::cpuStalledMicros(), std::nullopt});
  s.waiting.reset();
  updateHeld(s);
  holder_ = side;
  s.feed->write("g");
}

void TurnReferee::endTurn(TimingSide side) {
  holder_.reset();
  turns_.back().end = now();
  turns_.back().stalledAtEnd = proc::cpuStalledMicros();
  // The candidate is paused only while the reference times: it must be running to ask for its
  // next turn.
  if (side == TimingSide::Reference) pauseCandidate(false);
}

void TurnReferee::pauseCandidate(bool pause) {
  Side& c = of(TimingSide::Candidate);
  if (c.group <= 0 || c.finished || c.paused == pause) return;
  if (::kill(-c.group, pause ? SIGSTOP : SIGCONT) == 0) c.paused = pause;
  updateHeld(c);
}

void TurnReferee::updateHeld(Side& side) {
  const bool held = !side.finished && (side.waiting || side.paused);
  const auto t = std::chrono::steady_clock::now();
  if (held && !side.heldSince) side.heldSince = t;
  if (!held && side.heldSince) {
    side.held += t - *side.heldSince;
    side.heldSince.reset();
  }
}

std::chrono::milliseconds TurnReferee::heldUp(TimingSide side) const {
  std::scoped_lock lock(mutex_);
  const Side& s = of(side);
  auto held = s.held;
  if (s.heldSince) held += std::chrono::steady_clock::now() - *s.heldSince;
  return std::chrono::duration_cast<std::chrono::milliseconds>(held);
}

double TurnReferee::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin_).count();
}

}  // namespace crucible
