#include "core/generate/feedback.h"

#include <cstdio>
#include <sstream>

namespace crucible::generate {

namespace {

using nlohmann::json;

constexpr std::size_t kMaxErrorChars = 1500;

std::string number(const json& value) {
  if (!value.is_number()) return value.is_string() ? value.get<std::string>() : "n/a";
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value.get<double>());
  return text;
}

std::string shortened(const std::string& text) {
  if (text.size() <= kMaxErrorChars) return text;
  return "..." + text.substr(text.size() - kMaxErrorChars);  // the end says what went wrong
}

std::string verdictLine(const Evaluation& e) {
  switch (e.verdict) {
    case Verdict::Verified:
      return "Verdict: verified (the outputs match the reference and no cheating was found).";
    case Verdict::Incorrect:
      return e.error ? "Verdict: incorrect (it failed while running)."
                     : "Verdict: incorrect (the outputs do not match the reference).";
    case Verdict::Cheating:
      return "Verdict: cheating (it does not honestly compute the result in Triton kernels).";
    case Verdict::Invalid:
      return "Verdict: invalid (it is not a Triton implementation of ModelNew).";
    case Verdict::Error:
      return "Verdict: error (the verification could not finish).";
  }
  return "";
}

/// The first mismatching output of a comparison, as one line; "" when it matched.
std::string mismatchLine(const json& comparison, const std::string& where) {
  if (!comparison.is_object() || comparison.value("ok", true)) return "";
  if (!comparison.value("structure_match", true)) {
    return where + ": the outputs have the wrong structure: " +
           comparison.value("structure_note", std::string("not as the reference's"));
  }
  for (const json& t : comparison.value("tensors", json::array())) {
    if (t.value("ok", true)) continue;
    std::ostringstream line;
    line << where << ", output " << t.value("index", 0) << ": ";
    const std::string expected = t.value("expected", ""), actual = t.value("actual", "");
    if (expected != actual) {
      line << "expected " << expected << ", got " << actual;
      return line.str();
    }
    line << t.value("mismatches", 0) << " of " << t.value("elements", 0)
         << " elements differ (max abs error " << number(t.value("max_abs_error", json()))
         << ", max rel error " << number(t.value("max_rel_error", json())) << ", mean abs error "
         << number(t.value("mean_abs_error", json())) << ")";
    if (t.contains("first_mismatch") && t["first_mismatch"].is_number()) {
      line << ", first at flat index " << t["first_mismatch"].get<std::uint64_t>();
    }
    if (t.value("poisoned", 0) > 0) {
      line << "; " << t.value("poisoned", 0) << " elements were never written";
    }
    if (t.value("non_finite", 0) > 0) line << "; " << t.value("non_finite", 0) << " are NaN or inf";
    return line.str();
  }
  return "";
}

}  // namespace

std::string describeFindings(const Evaluation& e) {
  std::ostringstream out;
  out << verdictLine(e) << "\n";
  if (e.error) {
    out << "Error (" << e.error->stage;
    if (e.error->line) out << ", line " << *e.error->line;
    out << "): " << shortened(e.error->message) << "\n";
  }

  const json& trials = e.correctness.value("trials", json::array());
  int matched = 0, total = 0;
  std::string firstMismatch;
  for (std::size_t k = 0; k < trials.size(); ++k) {
    if (!trials[k].is_object()) continue;
    ++total;
    if (trials[k].value("ok", false)) {
      ++matched;
    } else if (firstMismatch.empty()) {
      firstMismatch = mismatchLine(trials[k], "Trial " + std::to_string(k));
    }
  }
  if (total > 0) {
    out << "Correctness: " << matched << " of " << total
        << " trials with fresh random inputs matched the reference.\n";
  }
  if (!firstMismatch.empty()) out << firstMismatch << "\n";
  const std::string alt =
      mismatchLine(e.correctness.value("alt", json()), "With another batch size");
  if (!alt.empty()) out << alt << "\n";

  if (!e.flags.empty()) {
    out << "Flags:\n";
    for (const Flag& f : e.flags) {
      out << "- " << f.id << (f.severity == Severity::Cheat ? " (cheating)" : " (warning)");
      if (f.line) out << ", line " << *f.line;
      out << ": " << f.message << "\n";
    }
  }

  if (e.timing.referenceMs || e.timing.candidateMs) {
    out << "Timing on " << (e.backend.empty() ? "the backend" : e.backend) << ": reference "
        << (e.timing.referenceMs ? number(*e.timing.referenceMs) + " ms" : "n/a") << ", candidate "
        << (e.timing.candidateMs ? number(*e.timing.candidateMs) + " ms" : "n/a");
    if (e.speedup) out << ", speedup " << number(*e.speedup) << "x";
    out << ".\n";
  }
  std::string text = out.str();
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

}  // namespace crucible::generate
