#include "core/bench/report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace crucible::bench {

namespace {

using nlohmann::json;

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

std::string percent(double fraction) {
  return format("%.1f%%", 100 * fraction);
}

std::string msText(const std::optional<double>& ms) {
  return ms ? format("%.3g", *ms) : "-";
}

/// A table cell: no pipes or newlines from error messages.
std::string cell(std::string text, std::size_t limit = 80) {
  for (char& c : text) {
    if (c == '|' || c == '\n' || c == '\r') c = ' ';
  }
  if (text.size() > limit) text = text.substr(0, limit - 3) + "...";
  return text;
}

std::string speedupText(const std::optional<double>& speedup) {
  return speedup ? format("%.3gx", *speedup) : "-";
}

}  // namespace

json toJson(const BenchReport& r) {
  json j = r.metrics;
  j["tasks"] = r.tasks;
  j["shrunk"] = r.settings.shrink.has_value();  // any rescale: the tasks' own sizes did not run
  j["shrink"] = r.settings.shrink ? json(*r.settings.shrink) : json(nullptr);
  j["settings"] = r.settings;
  j["tasks_planned"] = r.tasksPlanned;
  j["resumed"] = r.resumed;
  j["interrupted"] = r.interrupted;
  j["database"] = r.database.empty() ? json(nullptr) : json(r.database);
  j["machine"] = r.machine;
  j["date"] = r.date;
  return j;
}

/// Where the verifications spent their time, summed over every sample: which stage to make
/// faster when a run is slow. Empty when no sample says (rows from before stage_seconds).
std::string verificationTime(const std::vector<TaskResult>& tasks) {
  std::vector<std::pair<std::string, double>> stages;  // in the order they first appear
  double total = 0;
  for (const auto& t : tasks) {
    for (const auto& sample : t.samples) {
      for (const auto& time : sample.stageSeconds) {
        auto it = std::find_if(stages.begin(), stages.end(),
                               [&](const auto& s) { return s.first == time.stage; });
        if (it == stages.end()) it = stages.insert(stages.end(), {time.stage, 0.0});
        it->second += time.seconds;
        total += time.seconds;
      }
    }
  }
  if (stages.empty()) return "";
  std::ostringstream md;
  md << "## Verification time\n\nSummed over every sample (a reused reference run counts the "
        "copy).\n\n| stage | seconds | share |\n|---|---|---|\n";
  for (const auto& [stage, seconds] : stages) {
    md << "| " << stage << " | " << format("%.1f", seconds) << " | "
       << percent(total > 0 ? seconds / total : 0) << " |\n";
  }
  return md.str() + "\n";
}

std::string markdownReport(const BenchReport& r, const std::vector<std::string>& plots,
                           const std::string& plotsNote) {
  const Metrics& m = r.metrics;
  const RunSettings& s = r.settings;
  std::ostringstream md;
  md << "# Crucible benchmark: " << cell(s.taskDir) << "\n\n";
  if (s.shrink) {
    const bool grown = *s.shrink > 1;
    md << (grown ? "> **Scaled-up tasks** (`--scale " : "> **Shrunk tasks** (`--shrink ")
       << format("%g", *s.shrink) << "`): size constants were scaled " << (grown ? "up" : "down")
       << " to suit this device. Speedups are those of the rescaled sizes and are not "
          "comparable with runs of the original tasks.\n\n";
  }
  if (r.interrupted) {
    md << "> **Interrupted**: " << r.tasks.size() << " of " << r.tasksPlanned
       << " tasks finished; the metrics are over those. Rerun with the same `--report` folder "
          "to finish.\n\n";
  }
  md << "| setting | value |\n|---|---|\n"
     << "| date | " << r.date << " |\n"
     << "| machine | " << cell(r.machine, 200) << " |\n"
     << "| model | " << cell(s.model) << " |\n"
     << "| backend | " << s.backend << " |\n"
     << "| samples per task | " << s.samples << " |\n"
     << "| correctness trials | " << s.trials << " |\n"
     << "| torch.compile baseline | " << (s.compileBaseline ? "on" : "off") << " |\n"
     << "| levels | " << (s.levels.empty() ? "all" : json(s.levels).dump()) << " |\n"
     << "| resumed rows | " << r.resumed << " |\n\n";

  md << "## Summary\n\n"
     << "| metric | value |\n|---|---|\n"
     << "| tasks | " << m.tasks << " |\n"
     << "| correct (verified) | " << m.correct << " (" << percent(m.correctRate) << ") |\n"
     << "| geometric-mean speedup over correct tasks | " << speedupText(m.geomeanSpeedup) << " |\n"
     << "| ... against torch.compile | " << speedupText(m.geomeanSpeedupVsCompile) << " |\n";
  for (const auto& [k, v] : m.passAtK) md << "| pass@" << k << " | " << percent(v) << " |\n";
  md << "\nfast_p: the fraction of all tasks whose kernel is correct and more than p times "
        "faster than the baseline (KernelBench).\n\n"
     << "| p | fast_p (eager) | fast_p (torch.compile) |\n|---|---|---|\n";
  for (double p : kFastPThresholds) {
    const std::string key = thresholdKey(p);
    md << "| " << key << " | " << percent(m.fastP.at(key)) << " | "
       << (m.fastPVsCompile ? percent(m.fastPVsCompile->at(key)) : std::string("not measured"))
       << " |\n";
  }
  md << "\n" << verificationTime(r.tasks);
  if (!plots.empty()) {
    md << "## Plots\n\n";
    for (const auto& p : plots) md << "![" << p << "](" << p << ")\n\n";
  } else if (!plotsNote.empty()) {
    md << "Plots: " << plotsNote << "\n\n";
  }

  md << "## Tasks\n\n"
     << "| task | level | verdict | speedup | vs torch.compile | eager ms | kernel ms | "
        "correct samples | note |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& t : r.tasks) {
    const SampleResult* k = t.kept();
    std::string note = t.error;
    if (note.empty() && k) note = k->error;
    if (note.empty() && k && !k->flags.empty()) note = "flags: " + json(k->flags).dump();
    md << "| " << cell(t.id) << " | " << t.level << " | " << (k ? k->verdict : "-") << " | "
       << speedupText(k ? k->speedup() : std::nullopt) << " | "
       << speedupText(k ? k->speedupVsCompile() : std::nullopt) << " | "
       << msText(k ? k->referenceMs : std::nullopt) << " | "
       << msText(k ? k->candidateMs : std::nullopt) << " | " << t.correctSamples() << "/"
       << t.samples.size() << " | " << cell(note) << " |\n";
  }
  return md.str();
}

}  // namespace crucible::bench
