#pragma once
// Turns between the two stages that time on one machine: the reference's timer (the `baseline`
// stage) and the candidate. Each asks for a turn on its result channel before a round, waits
// for a grant on its stdin, times the round and says it is done (core/worker/.../turns.py). The
// referee grants turns in alternation, so load that comes and goes falls on both sides' rounds
// alike, and pauses the candidate's processes while the reference times: whatever the
// candidate left running cannot slow the reference down.

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "core/proc/process.h"

namespace crucible {

enum class TimingSide { Reference = 0, Candidate = 1 };

class TurnReferee {
 public:
  TurnReferee();
  ~TurnReferee();
  TurnReferee(const TurnReferee&) = delete;
  TurnReferee& operator=(const TurnReferee&) = delete;

  /// The stdin feed a side's stage reads its grants from.
  std::shared_ptr<proc::StdinFeed> feed(TimingSide side) const;
  /// Grants the reference's turns on a kept timer's own feed (baseline_keeper.h), which stays
  /// open when the side finishes: that process lives on for the next candidate.
  void adoptReferenceFeed(std::shared_ptr<proc::StdinFeed> feed);
  /// The side's process group, once it runs (the candidate's is paused during the reference's
  /// turns).
  void started(TimingSide side, int processGroup);
  /// A signed message from the side's stage; only {"type": "turn"} ones matter here.
  void message(TimingSide side, const nlohmann::json& message);
  /// The side's process has ended: it takes no more turns, and the other side needs none of it.
  void finished(TimingSide side);

  /// How long the side has been held up by the turns: waiting for a grant, or paused. Not
  /// counted against its stage's timeout.
  std::chrono::milliseconds heldUp(TimingSide side) const;
  /// Whether the candidate side has asked for a turn yet.
  bool candidateAsked() const;
  /// Every turn granted, in order: {"side", "index", "start_s", "end_s", "cpu_stalled_s"}
  /// (seconds from the referee's start; the seconds some task waited for a CPU during the turn,
  /// null where the kernel does not say), the messages that broke the protocol, and
  /// "cpu_pressure": the share of all turns' time during which some task waited for a CPU.
  nlohmann::json log() const;

 private:
  struct Side {
    std::shared_ptr<proc::StdinFeed> feed;
    bool feedKept = false;  // not closed when the side finishes
    int group = 0;
    std::optional<int> waiting;  // the turn it asked for and has not been granted
    bool asked = false;
    bool finished = false;
    bool paused = false;
    std::optional<std::chrono::steady_clock::time_point> heldSince;
    std::chrono::steady_clock::duration held{};
  };
  struct Turn {
    TimingSide side;
    int index;
    double start, end;
    std::optional<std::uint64_t> stalledAtStart, stalledAtEnd;  // microseconds, machine-wide
  };

  void grantIfDue();  // with mutex_ held
  void grant(TimingSide side);
  void endTurn(TimingSide side);
  void pauseCandidate(bool pause);
  void updateHeld(Side& side);
  double now() const;
  Side& of(TimingSide side) { return sides_[static_cast<int>(side)]; }
  const Side& of(TimingSide side) const { return sides_[static_cast<int>(side)]; }

  mutable std::mutex mutex_;
  std::array<Side, 2> sides_;
  std::optional<TimingSide> holder_;
  TimingSide next_ = TimingSide::Reference;
  std::chrono::steady_clock::time_point origin_;
  std::vector<Turn> turns_;
  std::vector<std::string> protocolErrors_;
};

}  // namespace crucible
