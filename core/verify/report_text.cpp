#include "core/verify/report_text.h"

#include <cstdio>
#include <sstream>

namespace crucible {

namespace {
std::string number(double value, int precision = 3) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", precision, value);
  return buffer;
}

std::string milliseconds(const std::optional<double>& ms) {
  return ms ? number(*ms) + " ms" : "n/a";
}

std::string threadsText(const Timing& t) {
  if (!t.threads) return "";
  return ", " + std::to_string(*t.threads) + (*t.threads == 1 ? " CPU thread" : " CPU threads");
}

std::string verdictBanner(const Evaluation& e) {
  switch (e.verdict) {
    case Verdict::Verified:
      return "VERIFIED   correct, no cheating flag";
    case Verdict::Incorrect:
      return e.error ? "INCORRECT  the candidate failed while it ran"
                     : "INCORRECT  the outputs do not match the reference";
    case Verdict::Cheating:
      return "CHEATING   at least one cheating flag was raised";
    case Verdict::Invalid:
      return "INVALID    the candidate is not a Triton candidate";
    case Verdict::Error:
      return "ERROR      the evaluation could not finish";
  }
  return "";
}

std::string summary(std::optional<double> speedup, const std::optional<SpeedupSpread>& spread) {
  if (!speedup) return "n/a";
  const std::string median = number(*speedup) + "x";
  if (!spread) return median;
  const std::string range = number(spread->low, 2) + "-" + number(spread->high, 2) + "x";
  return spread->noisy ? "noisy: " + range + " (median " + median + ")"
                       : median + " (" + range + ")";
}

/// How the two sides were timed: in how many rounds, and whether in turns.
std::string roundsText(const Timing& t) {
  if (t.rounds <= 0) return "";
  return ", " + std::to_string(t.rounds) + (t.rounds == 1 ? " round" : " rounds") +
         (t.interleaved ? " in turns" : " NOT in turns");
}
}  // namespace

std::string speedupSummary(const Evaluation& e) {
  return summary(e.speedup, e.speedupSpread);
}

std::string compileSpeedupSummary(const Evaluation& e) {
  const auto& t = e.timing;
  if (!e.speedup || !t.compileReferenceMs || !t.candidateMs || *t.candidateMs <= 0) return "n/a";
  return summary(*t.compileReferenceMs / *t.candidateMs, e.compileSpeedupSpread);
}

std::string renderEvaluationText(const Evaluation& e) {
  std::ostringstream out;
  out << verdictBanner(e) << "\n";
  out << "  backend    " << e.backend << (e.device.empty() ? "" : " on " + e.device)
      << threadsText(e.timing) << "\n";
  if (!e.sandboxed) {
    out << "  sandbox    NOT SANDBOXED" << (e.sandboxNote.empty() ? "" : ": " + e.sandboxNote)
        << "\n";
  }
  out << "  speedup    " << speedupSummary(e) << "   (reference "
      << milliseconds(e.timing.referenceMs) << ", candidate " << milliseconds(e.timing.candidateMs)
      << ", torch.compile " << milliseconds(e.timing.compileReferenceMs) << roundsText(e.timing)
      << ")\n";
  if (e.speedup && e.timing.compileReferenceMs) {
    out << "  vs compile " << compileSpeedupSummary(e) << "\n";
  }
  if (e.error) {
    out << "  error      [" << e.error->stage << "] " << e.error->message;
    if (e.error->line) out << " (line " << *e.error->line << ")";
    out << "\n";
  }
  const auto& trials = e.correctness.value("trials", nlohmann::json::array());
  int passed = 0, total = 0;
  for (const auto& t : trials) {
    ++total;
    passed += t.is_object() && t.value("ok", false);
  }
  if (total > 0) out << "  trials     " << passed << "/" << total << " matched the reference\n";
  for (const auto& t : trials) {
    if (!t.is_object() || t.value("ok", false)) continue;
    for (const auto& tensor : t.value("tensors", nlohmann::json::array())) {
      if (tensor.value("ok", false)) continue;
      out << "             first mismatch: output " << tensor.value("index", 0) << " ("
          << tensor.value("expected", "") << "): " << tensor.value("mismatches", 0) << " of "
          << tensor.value("elements", 0) << " elements differ, max abs error "
          << tensor.value("max_abs_error", nlohmann::json(0)).dump() << "\n";
      break;
    }
    if (!t.value("structure_note", "").empty()) {
      out << "             " << t.value("structure_note", "") << "\n";
    }
    break;
  }
  if (e.flags.empty()) {
    out << "  flags      none\n";
  } else {
    out << "  flags\n";
    for (const auto& f : e.flags) {
      out << "    " << (f.severity == Severity::Cheat ? "[cheat]   " : "[warning] ") << f.id;
      if (f.line) out << " (line " << *f.line << ")";
      out << ": " << f.message << "\n";
    }
  }
  out << "  reward     " << e.reward.preset << " = "
      << (e.reward.total ? number(*e.reward.total, 4) : std::string("n/a (infrastructure error)"));
  if (!e.reward.components.empty()) {
    out << "  (";
    for (std::size_t i = 0; i < e.reward.components.size(); ++i) {
      const auto& c = e.reward.components[i];
      out << (i ? ", " : "") << c.name << (c.part.empty() ? "" : "[" + c.part + "]") << " "
          << number(c.value, 4);
    }
    out << ")";
  }
  out << "\n";
  // Whole stages only; their phases are in the JSON's stage_seconds.
  std::string stages;
  for (const auto& t : e.stageSeconds) {
    if (t.stage.find('/') != std::string::npos) continue;
    stages += (stages.empty() ? "" : ", ") + t.stage + " " + number(t.seconds, 2) + " s";
  }
  if (!stages.empty()) out << "  time       " << stages << "\n";
  return out.str();
}

}  // namespace crucible
