#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/proc/cpu_pressure.h"
#include "core/verify/timing_turns.h"

namespace crucible {
namespace {

using nlohmann::json;

json ready(int k) {
  return {{"type", "turn"}, {"state", "ready"}, {"index", k}};
}
json done(int k) {
  return {{"type", "turn"}, {"state", "done"}, {"index", k}};
}

/// What a feed has been given so far (closing it to read it all).
std::string granted(const std::shared_ptr<proc::StdinFeed>& feed) {
  bool closed = false;
  return feed->take(closed);
}

std::vector<std::string> order(const TurnReferee& referee) {
  std::vector<std::string> out;
  const json log = referee.log();
  for (const auto& t : log["turns"]) {
    out.push_back(t["side"].get<std::string>() + " " + std::to_string(t["index"].get<int>()));
  }
  return out;
}

TEST(TurnReferee, TheFirstTurnWaitsForBothSidesThenTheyAlternate) {
  TurnReferee referee;
  auto ref = referee.feed(TimingSide::Reference), cand = referee.feed(TimingSide::Candidate);
  referee.message(TimingSide::Reference, ready(0));
  EXPECT_EQ(granted(ref), "");  // the candidate is still running its trials
  referee.message(TimingSide::Candidate, ready(0));
  EXPECT_EQ(granted(ref), "g");
  EXPECT_EQ(granted(cand), "");
  referee.message(TimingSide::Reference, done(0));
  EXPECT_EQ(granted(cand), "g");
  referee.message(TimingSide::Reference, ready(1));  // asks early: waits for the candidate
  EXPECT_EQ(granted(ref), "");
  referee.message(TimingSide::Candidate, done(0));
  EXPECT_EQ(granted(ref), "g");
  referee.message(TimingSide::Candidate, ready(1));
  referee.message(TimingSide::Reference, done(1));
  EXPECT_EQ(granted(cand), "g");
  referee.message(TimingSide::Candidate, done(1));
  // The reference's timer has no more rounds and ends: the candidate's next turn is its own.
  referee.message(TimingSide::Candidate, ready(2));
  EXPECT_EQ(granted(cand), "");
  referee.finished(TimingSide::Reference);
  EXPECT_EQ(granted(cand), "g");
  EXPECT_EQ(order(referee), (std::vector<std::string>{"reference 0", "candidate 0", "reference 1",
                                                      "candidate 1", "candidate 2"}));
  EXPECT_TRUE(referee.candidateAsked());
  // No two turns overlap.
  const json turns = referee.log()["turns"];
  for (std::size_t i = 1; i < turns.size(); ++i) {
    EXPECT_LE(turns[i - 1]["end_s"].get<double>(), turns[i]["start_s"].get<double>());
  }
}

TEST(TurnReferee, AKeptTimersFeedTakesTheGrantsAndOutlivesTheSession) {
  TurnReferee referee;
  auto kept = std::make_shared<proc::StdinFeed>();
  auto own = referee.feed(TimingSide::Reference);
  referee.adoptReferenceFeed(kept);
  EXPECT_EQ(referee.feed(TimingSide::Reference), kept);
  referee.message(TimingSide::Reference, ready(0));
  referee.message(TimingSide::Candidate, ready(0));
  EXPECT_EQ(granted(kept), "g");
  EXPECT_EQ(granted(own), "");
  referee.message(TimingSide::Reference, done(0));
  referee.finished(TimingSide::Reference);
  referee.finished(TimingSide::Candidate);
  // The session is over, not the process: the next session's bytes still go through.
  EXPECT_TRUE(kept->write("n"));
  bool closed = true;
  EXPECT_EQ(kept->take(closed), "n");
  EXPECT_FALSE(closed);
  // A side's own feed is closed when it finishes.
  EXPECT_FALSE(referee.feed(TimingSide::Candidate)->write("g"));
}

TEST(TurnReferee, EachTurnSaysHowLongTheCpuWasContendedDuringIt) {
  if (!proc::cpuStalledMicros()) GTEST_SKIP() << "this kernel gives no CPU pressure";
  TurnReferee referee;
  referee.message(TimingSide::Reference, ready(0));
  referee.message(TimingSide::Candidate, ready(0));
  // Two threads that want the CPU longer than the turn lasts, beside this one: on a machine of
  // fewer cores than that, someone waits.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  std::vector<std::thread> busy;
  const unsigned n = std::thread::hardware_concurrency() + 1;
  for (unsigned i = 0; i < n; ++i) {
    busy.emplace_back([until] {
      while (std::chrono::steady_clock::now() < until) {
      }
    });
  }
  for (auto& t : busy) t.join();
  referee.message(TimingSide::Reference, done(0));
  const json log = referee.log();
  ASSERT_EQ(log["turns"].size(), 2u);
  EXPECT_TRUE(log["turns"][0]["cpu_stalled_s"].is_number()) << log.dump();
  EXPECT_TRUE(log["turns"][1]["cpu_stalled_s"].is_null());  // still running
  const json& pressure = log["cpu_pressure"];
  ASSERT_TRUE(pressure.is_object()) << log.dump();
  EXPECT_GT(pressure["fraction"].get<double>(), 0.1) << pressure.dump();
  EXPECT_LE(pressure["fraction"].get<double>(), 1.0);
}

TEST(CpuPressure, ReadsTheSomeTotalAndRefusesWhatIsNotThere) {
  const auto dir = std::filesystem::temp_directory_path();
  const auto file = dir / ("crucible-psi-" + std::to_string(::getpid()));
  std::ofstream(file) << "some avg10=1.00 avg60=0.50 avg300=0.10 total=123456\n"
                         "full avg10=0.00 avg60=0.00 avg300=0.00 total=7\n";
  EXPECT_EQ(proc::cpuStalledMicros(file), 123456u);
  std::ofstream(file) << "full avg10=0.00 total=7\nsome avg10=0.00 total=12x\n";
  EXPECT_FALSE(proc::cpuStalledMicros(file));
  std::filesystem::remove(file);
  EXPECT_FALSE(proc::cpuStalledMicros(file));
}

TEST(TurnReferee, MessagesOutOfProtocolAreLoggedAndGrantNothing) {
  TurnReferee referee;
  auto ref = referee.feed(TimingSide::Reference);
  referee.message(TimingSide::Candidate, done(0));  // a turn it was never given
  referee.message(TimingSide::Candidate, {{"type", "turn"}, {"state", "ready"}});  // no number
  referee.message(TimingSide::Candidate, {{"type", "phase"}, {"name", "x"}});      // not a turn
  const json log = referee.log();
  EXPECT_EQ(log["protocol_errors"].size(), 2u) << log.dump();
  EXPECT_TRUE(log["turns"].empty());
  EXPECT_FALSE(referee.candidateAsked());
  referee.message(TimingSide::Reference, ready(0));
  referee.finished(TimingSide::Candidate);  // it died before asking: the reference goes alone
  EXPECT_EQ(granted(ref), "g");
}

TEST(TurnReferee, TimeSpentWaitingForATurnIsNotTheStagesOwn) {
  TurnReferee referee;
  referee.message(TimingSide::Candidate, ready(0));
  usleep(60'000);  // the reference's timer is still compiling
  referee.message(TimingSide::Reference, ready(0));
  referee.message(TimingSide::Reference, done(0));  // granted to the candidate now
  const auto held = referee.heldUp(TimingSide::Candidate);
  EXPECT_GE(held.count(), 60);
  usleep(30'000);  // its own turn: counted
  EXPECT_EQ(referee.heldUp(TimingSide::Candidate), held);
  EXPECT_LT(referee.heldUp(TimingSide::Reference).count(), 30);
}

char processState(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  return close == std::string::npos || close + 2 >= text.size() ? '?' : text[close + 2];
}

TEST(TurnReferee, TheCandidatesProcessesArePausedWhileTheReferenceTimes) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    setpgid(0, 0);
    for (;;) pause();
  }
  setpgid(child, child);
  {
    TurnReferee referee;
    referee.started(TimingSide::Candidate, child);
    referee.message(TimingSide::Candidate, ready(0));
    referee.message(TimingSide::Reference, ready(0));
    usleep(50'000);
    EXPECT_EQ(processState(child), 'T');  // stopped during the reference's turn
    referee.message(TimingSide::Reference, done(0));
    usleep(50'000);
    EXPECT_NE(processState(child), 'T');  // running again for its own
    referee.message(TimingSide::Candidate, done(0));
    referee.message(TimingSide::Reference, ready(1));
    usleep(50'000);
    EXPECT_EQ(processState(child), 'T');
  }  // a referee that goes away leaves nothing stopped
  usleep(50'000);
  EXPECT_NE(processState(child), 'T');
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace crucible
