#pragma once
// A verified or incorrect sample with given times, for the benchmark's unit tests.

#include <optional>

#include "core/bench/task_result.h"

namespace crucible::test {

inline bench::SampleResult sample(bool correct, std::optional<double> refMs,
                                  std::optional<double> candMs,
                                  std::optional<double> compileMs = std::nullopt) {
  bench::SampleResult s;
  s.correct = correct;
  s.compiled = true;
  s.verdict = correct ? "verified" : "incorrect";
  s.referenceMs = refMs;
  s.candidateMs = candMs;
  s.compileMs = compileMs;
  return s;
}

}  // namespace crucible::test
