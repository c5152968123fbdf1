#include "core/bench/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace crucible::bench {

namespace {

using nlohmann::json;

std::optional<double> speedupOf(const SampleResult& s, Baseline baseline) {
  return baseline == Baseline::Eager ? s.speedup() : s.speedupVsCompile();
}

std::optional<double> geomean(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  double logSum = 0;
  for (double v : values) logSum += std::log(v);
  return std::exp(logSum / static_cast<double>(values.size()));
}

std::map<std::string, double> fastPTable(const std::vector<TaskResult>& tasks, Baseline baseline) {
  std::map<std::string, double> table;
  for (double p : kFastPThresholds) table[thresholdKey(p)] = fastP(tasks, p, baseline);
  return table;
}

json optionalJson(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

}  // namespace

std::string thresholdKey(double p) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", p);
  return text;
}

std::vector<double> correctSpeedups(const std::vector<TaskResult>& tasks, Baseline baseline) {
  std::vector<double> speedups;
  for (const auto& t : tasks) {
    if (!t.correct()) continue;
    if (const auto s = speedupOf(*t.kept(), baseline)) speedups.push_back(*s);
  }
  return speedups;
}

double fastP(const std::vector<TaskResult>& tasks, double p, Baseline baseline) {
  if (tasks.empty()) return 0;
  int fast = 0;
  for (double s : correctSpeedups(tasks, baseline)) fast += s > p ? 1 : 0;
  return static_cast<double>(fast) / static_cast<double>(tasks.size());
}

double passAtK(int n, int c, int k) {
  if (n <= 0 || k <= 0) return 0;
  k = std::min(k, n);
  c = std::clamp(c, 0, n);
  if (n - c < k) return 1;
  // 1 - C(n-c, k) / C(n, k) = 1 - prod_{i = n-c+1}^{n} (1 - k / i)
  double allWrong = 1;
  for (int i = n - c + 1; i <= n; ++i) allWrong *= 1.0 - static_cast<double>(k) / i;
  return 1.0 - allWrong;
}

std::vector<int> passAtKValues(int samples) {
  std::vector<int> ks;
  for (int k : {1, 2, 5, 10, 20, 50, 100}) {
    if (k <= samples) ks.push_back(k);
  }
  if (samples >= 1 && (ks.empty() || ks.back() != samples)) ks.push_back(samples);
  return ks;
}

Metrics computeMetrics(const std::vector<TaskResult>& tasks, int samplesPerTask) {
  Metrics m;
  m.tasks = static_cast<int>(tasks.size());
  m.samples = samplesPerTask;
  for (const auto& t : tasks) {
    const SampleResult* k = t.kept();
    m.correct += t.correct() ? 1 : 0;
    m.compiled += k && k->compiled ? 1 : 0;
    m.compileTimed += k && k->compileMs ? 1 : 0;
  }
  m.correctRate = m.tasks ? static_cast<double>(m.correct) / m.tasks : 0;
  m.fastP = fastPTable(tasks, Baseline::Eager);
  if (m.compileTimed > 0) m.fastPVsCompile = fastPTable(tasks, Baseline::Compile);
  m.geomeanSpeedup = geomean(correctSpeedups(tasks, Baseline::Eager));
  m.geomeanSpeedupVsCompile = geomean(correctSpeedups(tasks, Baseline::Compile));
  for (int k : passAtKValues(samplesPerTask)) {
    double sum = 0;
    for (const auto& t : tasks) {
      sum += passAtK(static_cast<int>(t.samples.size()), t.correctSamples(), k);
    }
    m.passAtK[std::to_string(k)] = m.tasks ? sum / m.tasks : 0;
  }
  return m;
}

void to_json(json& j, const Metrics& m) {
  j = json{{"tasks_total", m.tasks},
           {"tasks_correct", m.correct},
           {"tasks_compiled", m.compiled},
           {"correct_rate", m.correctRate},
           {"fast_p", m.fastP},
           {"fast_p_vs_compile", m.fastPVsCompile ? json(*m.fastPVsCompile) : json(nullptr)},
           {"compile_timed", m.compileTimed},
           {"geomean_speedup", optionalJson(m.geomeanSpeedup)},
           {"geomean_speedup_vs_compile", optionalJson(m.geomeanSpeedupVsCompile)},
           {"samples", m.samples},
           {"pass_at_k", m.passAtK}};
}

void from_json(const json& j, Metrics& m) {
  m = Metrics{};
  m.tasks = j.at("tasks_total").get<int>();
  m.correct = j.at("tasks_correct").get<int>();
  m.compiled = j.value("tasks_compiled", 0);
  m.correctRate = j.at("correct_rate").get<double>();
  m.fastP = j.at("fast_p").get<std::map<std::string, double>>();
  if (!j.at("fast_p_vs_compile").is_null()) {
    m.fastPVsCompile = j.at("fast_p_vs_compile").get<std::map<std::string, double>>();
  }
  m.compileTimed = j.value("compile_timed", 0);
  if (!j.at("geomean_speedup").is_null()) m.geomeanSpeedup = j.at("geomean_speedup").get<double>();
  if (j.contains("geomean_speedup_vs_compile") && !j.at("geomean_speedup_vs_compile").is_null()) {
    m.geomeanSpeedupVsCompile = j.at("geomean_speedup_vs_compile").get<double>();
  }
  m.samples = j.value("samples", 1);
  m.passAtK = j.value("pass_at_k", std::map<std::string, double>{});
}

}  // namespace crucible::bench

namespace crucible::bench {

std::vector<std::pair<double, double>> fastPCurve(const std::vector<TaskResult>& tasks,
                                                  Baseline baseline, double maxP, int points) {
  std::vector<std::pair<double, double>> curve;
  for (int i = 0; i < points; ++i) {
    const double p = points > 1 ? maxP * i / (points - 1) : 0;
    curve.emplace_back(p, fastP(tasks, p, baseline));
  }
  return curve;
}

std::vector<HistogramBin> speedupHistogram(const std::vector<double>& speedups, int octaves,
                                           int perOctave) {
  std::vector<HistogramBin> bins;
  const int count = 2 * octaves * perOctave;
  for (int i = 0; i < count; ++i) {
    const double lowExp = -octaves + static_cast<double>(i) / perOctave;
    bins.push_back({std::exp2(lowExp), std::exp2(lowExp + 1.0 / perOctave), 0});
  }
  for (double s : speedups) {
    if (!(s > 0)) continue;
    const double at = (std::log2(s) + octaves) * perOctave;
    const int i = std::clamp(static_cast<int>(std::floor(at)), 0, count - 1);
    ++bins[static_cast<std::size_t>(i)].count;
  }
  return bins;
}

}  // namespace crucible::bench
