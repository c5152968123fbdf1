#include "core/verify/compare_outputs.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "core/util/parallel_chunks.h"
#include "core/verify/job_packs.h"

namespace crucible {

namespace {

using Pack = std::optional<ValuePack>;

/// "Beyond rounding": a tenth of the tolerance, for a repeated call's output.
ToleranceTable roundingOf(const ToleranceTable& tolerances) {
  ToleranceTable rounding = tolerances;
  rounding.fp32 = {tolerances.fp32.atol / 10, tolerances.fp32.rtol / 10};
  rounding.fp16 = {tolerances.fp16.atol / 10, tolerances.fp16.rtol / 10};
  return rounding;
}

/// Does the output follow the inputs? Trials against trial 0 on both sides, and trials whose
/// output repeats an earlier trial's while the reference's changed. Yes-or-no questions: each
/// stops at its answer.
void compareAcrossTrials(const std::vector<Pack>& expected, const std::vector<Pack>& actual,
                         const ToleranceTable& tolerances, MatchRule rule, Observations& o) {
  const int trials = static_cast<int>(actual.size());
  const ValuePack& first = *actual[0];
  bool allSame = trials >= 2, refVaries = false;
  for (int k = 1; k < trials && allSame; ++k) {
    allSame = actual[k] && packsMatch(first, *actual[k], tolerances, rule);
  }
  for (int k = 1; k < trials && !refVaries; ++k) {
    refVaries =
        expected[0] && expected[k] && !packsMatch(*expected[0], *expected[k], tolerances, rule);
  }
  o.candidateOutputsConstant = allSame;
  o.referenceOutputsVary = refVaries;
  if (allSame) return;
  for (int k = 1; k < trials; ++k) {
    for (int j = 0; j < k; ++j) {
      if (actual[k] && actual[j] && expected[k] && expected[j] &&
          bitwiseEqual(*actual[k], *actual[j]) && !bitwiseEqual(*expected[k], *expected[j])) {
        o.staleTrials.emplace_back(k, j);
      }
    }
  }
}

/// How many kept outputs of timing slot `slot` the candidate's worker wrote.
int timedFilesOf(const nlohmann::json& facts, int slot) {
  const auto& timing = facts.is_object() ? facts.value("timing", nlohmann::json::object())
                                         : nlohmann::json::object();
  const auto& checked = timing.value("checked", nlohmann::json::object());
  const auto& files = checked.value("files", nlohmann::json::object());
  const auto it = files.find(std::to_string(slot));
  return it != files.end() && it->is_number_integer() ? std::clamp(it->get<int>(), 0, 64) : 0;
}

/// Outputs returned while timed, against the expected outputs of the timing set each call ran
/// on (ref/expected_timing_J): every kept output of every slot, and the outside check's last.
void compareTimedOutputs(const JobPacks& packs, const ToleranceTable& tolerances, MatchRule rule,
                         Observations& o) {
  const int sets = std::clamp(o.referenceFacts.value("timing_sets", 0), 0, 64);
  for (int j = 0; j < sets; ++j) {
    const int files = timedFilesOf(o.candidateFacts, j);
    if (files == 0 && j > 0) continue;
    const auto expected =
        packs.load(packs.reference("ref", "expected_timing_" + std::to_string(j) + ".ctp"));
    std::vector<std::string> names;
    for (int n = 0; n < files; ++n) {
      names.push_back("timed_" + std::to_string(j) + "_" + std::to_string(n) + ".ctp");
    }
    if (j == 0) names.push_back("timed_check.ctp");
    for (const auto& name : names) {
      const PackFile file = packs.candidate(name);
      if (file.bytes == 0) continue;  // not written: the facts say why (an error, no timing)
      const auto actual = packs.load(file);
      if (actual.replaced) o.replacedFiles.push_back(name);
      o.timed.push_back(
          expected.pack && actual.pack
              ? std::optional(comparePacks(*expected.pack, *actual.pack, tolerances, rule))
              : std::nullopt);
    }
  }
}

/// Each phase's seconds, named "compare/<phase>", from one clock.
class PhaseClock {
 public:
  void end(const char* phase) {
    const auto now = std::chrono::steady_clock::now();
    phases_.push_back(
        {std::string("compare/") + phase, std::chrono::duration<double>(now - since_).count()});
    since_ = now;
  }
  std::vector<StageTime> take() { return std::move(phases_); }

 private:
  std::chrono::steady_clock::time_point since_ = std::chrono::steady_clock::now();
  std::vector<StageTime> phases_;
};

}  // namespace

std::vector<StageTime> compareOutputs(const std::filesystem::path& job, int trials,
                                      const ToleranceTable& tolerances, Observations& o) {
  PhaseClock clock;
  const JobPacks packs(job, o.candidateFacts);
  const auto replaced = [&](const LoadedPack& p, const PackFile& f) {
    if (p.replaced) o.replacedFiles.push_back(f.path.filename().string());
  };

  // Phase one: the trials' expected and actual outputs, read all at once (the most this step
  // ever holds), for the degeneracy gates, the trials and the comparisons across trials.
  std::vector<PackFile> files;  // expected_K at 2K, actual_K at 2K + 1
  for (int k = 0; k < trials; ++k) {
    const std::string n = std::to_string(k);
    files.push_back(packs.reference("ref", "expected_" + n + ".ctp"));
    files.push_back(packs.candidate("actual_" + n + ".ctp"));
  }
  std::vector<LoadedPack> loaded(files.size());
  forEachChunk(files.size(), [&](std::size_t i) { loaded[i] = packs.load(files[i]); });
  std::vector<Pack> expected, actual;
  std::uint64_t budget = 0, expectedBytes = 0;
  for (std::size_t i = 0; i < files.size(); i += 2) {
    expected.push_back(std::move(loaded[i].pack));
    actual.push_back(std::move(loaded[i + 1].pack));
    replaced(loaded[i + 1], files[i + 1]);
    expectedBytes += files[i].bytes;
    budget += files[i].bytes + files[i + 1].bytes;
  }

  std::vector<const ValuePack*> expectedPtrs;
  for (const auto& e : expected) {
    if (e) expectedPtrs.push_back(&*e);
  }
  o.degeneracy = assessDegeneracy(expectedPtrs, tolerances);
  const MatchRule rule = o.degeneracy.degenerate ? MatchRule::RelativeNorm : MatchRule::AllClose;
  for (int k = 0; k < trials; ++k) {
    o.trials.push_back(expected[k] && actual[k]
                           ? std::optional(comparePacks(*expected[k], *actual[k], tolerances, rule))
                           : std::nullopt);
  }
  const bool haveFirst = !actual.empty() && actual[0];
  if (haveFirst) compareAcrossTrials(expected, actual, tolerances, rule, o);
  clock.end("trials");

  // Phase two: the other files, each read ahead in the room the dropped trial outputs leave
  // and compared in turn. Trial 0's output stays for the repeat and no-op calls.
  actual.resize(haveFirst ? 1 : 0);
  const std::uint64_t firstBytes = haveFirst ? files[1].bytes : 0;
  std::vector<PackFile> later;
  later.push_back(packs.reference("ref", "expected_alt.ctp"));
  later.push_back(packs.candidate("actual_alt.ctp"));
  if (haveFirst) {
    later.push_back(packs.candidate("actual_repeat.ctp"));
    later.push_back(packs.candidate("actual_noop.ctp"));
    later.push_back(packs.reference("inputs", "inputs_0.ctp"));
    later.push_back(packs.candidate("inputs_after_0.ctp"));
  }
  LoadAhead ahead(packs, later, budget, expectedBytes + firstBytes);
  std::size_t at = 0;
  const auto next = [&] {
    auto p = ahead.next();
    replaced(p, later[at++]);
    return p;
  };
  const auto done = [&](LoadedPack& p) {  // dropped first, then its room given back
    p.pack.reset();
    ahead.release(p.bytes);
  };

  expected.clear();
  ahead.release(expectedBytes);

  auto expectedAlt = next();
  auto actualAlt = next();
  if (expectedAlt.pack && actualAlt.pack) {
    o.alt = comparePacks(*expectedAlt.pack, *actualAlt.pack, tolerances, rule);
  }
  done(expectedAlt);
  done(actualAlt);
  if (!haveFirst) {
    clock.end("checks");
    return clock.take();
  }

  const ValuePack& first = *actual[0];
  auto repeat = next();
  if (repeat.pack) o.repeat = comparePacks(first, *repeat.pack, roundingOf(tolerances));
  done(repeat);
  auto noop = next();
  if (noop.pack) o.noop = comparePacks(first, *noop.pack, tolerances);
  done(noop);
  actual.clear();
  ahead.release(firstBytes);
  const auto inputs0 = next();
  const auto after0 = next();
  if (inputs0.pack && after0.pack) o.inputsMutated = !bitwiseEqual(*inputs0.pack, *after0.pack);
  clock.end("checks");
  compareTimedOutputs(packs, tolerances, rule, o);
  clock.end("timed");
  return clock.take();
}

}  // namespace crucible
