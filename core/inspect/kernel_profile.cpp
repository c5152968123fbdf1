#include "core/inspect/kernel_profile.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace crucible {

using nlohmann::json;

namespace {

template <typename T>
json optionalJson(const std::optional<T>& value) {
  return value ? json(*value) : json();
}

template <typename T>
std::optional<T> optionalOf(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<T>();
}

/// An integer fact from the worker, which may be missing, null or of another type.
std::optional<std::int64_t> integerFact(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer()) return std::nullopt;
  return j[key].get<std::int64_t>();
}

std::optional<int> lineFact(const json& j, const char* key) {
  auto value = integerFact(j, key);
  if (!value || *value <= 0 || *value > std::numeric_limits<int>::max()) return std::nullopt;
  return static_cast<int>(*value);
}

std::vector<double> numbers(const json& j) {
  std::vector<double> out;
  if (!j.is_array()) return out;
  for (const auto& x : j) {
    if (x.is_number() && std::isfinite(x.get<double>())) out.push_back(x.get<double>());
  }
  return out;
}

double quantile(const std::vector<double>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const auto above = std::min(below + 1, sorted.size() - 1);
  const double weight = position - static_cast<double>(below);
  return sorted[below] * (1 - weight) + sorted[above] * weight;
}

LaunchProfile launchFromFacts(const json& fact, int index) {
  LaunchProfile l;
  l.index = index;
  l.kernel = fact.value("kernel", std::string("?"));
  l.launchLine = lineFact(fact, "launch_line");
  l.defLine = lineFact(fact, "def_line");
  if (fact.contains("grid") && fact["grid"].is_array()) {
    for (const auto& g : fact["grid"]) {
      if (g.is_number_integer()) l.grid.push_back(g.get<std::int64_t>());
    }
  }
  l.time = spreadOf(numbers(fact.value("ms", json::array())));
  return l;
}

/// The counted figures of `fact` (a count-mode launch) into `l`.
void addCounts(LaunchProfile& l, const json& fact) {
  l.counted = fact.value("counted", false) == true;
  if (!l.counted) {
    const json reason = fact.value("reason", json());
    l.notCountedReason = reason.is_string() ? reason.get<std::string>() : "not counted";
    return;
  }
  l.bytesRead = integerFact(fact, "bytes_read");
  l.bytesWritten = integerFact(fact, "bytes_written");
  l.flops = integerFact(fact, "flops");
  if (!l.bytesRead || !l.bytesWritten || !l.flops) {
    l.counted = false;
    l.notCountedReason = "the count reported no figures";
  }
}

std::optional<ProfileError> errorFromFacts(const json& facts, const std::string& stage) {
  const json error = facts.is_object() ? facts.value("error", json()) : json();
  if (!error.is_object()) return std::nullopt;
  ProfileError e;
  e.stage = error.value("stage", stage);
  e.message = error.value("message", std::string("the candidate failed"));
  e.line = lineFact(error, "line");
  return e;
}

/// Pairs the counted launches with the timed ones by position, or says why not.
void pairCounts(KernelProfile& p, const json& counted) {
  if (!counted.is_object()) {
    p.countNote = "the count did not run";
    return;
  }
  if (auto error = errorFromFacts(counted, "count")) {
    p.countNote = "counting on the interpreter failed: " + error->message +
                  (error->line ? " (line " + std::to_string(*error->line) + ")" : "");
    return;
  }
  const json launches = counted.value("launches", json::array());
  bool same = launches.is_array() && launches.size() == p.launches.size();
  for (std::size_t i = 0; same && i < p.launches.size(); ++i) {
    same = launches[i].value("kernel", std::string()) == p.launches[i].kernel;
  }
  if (!same) {
    p.countNote = "the interpreter's call launched other kernels than the timed calls (" +
                  std::to_string(launches.is_array() ? launches.size() : 0) + " launches against " +
                  std::to_string(p.launches.size()) + "): nothing is counted";
    return;
  }
  for (std::size_t i = 0; i < p.launches.size(); ++i) addCounts(p.launches[i], launches[i]);
}

}  // namespace

std::optional<TimeSpread> spreadOf(std::vector<double> samples) {
  if (samples.empty()) return std::nullopt;
  std::sort(samples.begin(), samples.end());
  TimeSpread t;
  t.samples = static_cast<int>(samples.size());
  t.minMs = samples.front();
  t.maxMs = samples.back();
  t.medianMs = quantile(samples, 0.5);
  t.q1Ms = quantile(samples, 0.25);
  t.q3Ms = quantile(samples, 0.75);
  return t;
}

std::optional<RoofPoint> roofPoint(double bytes, double flops, double ms,
                                   const DevicePeaks& peaks) {
  if (!(ms > 0) || bytes < 0 || flops < 0 || (bytes == 0 && flops == 0)) return std::nullopt;
  if (!(peaks.bandwidthGBs > 0) || !(peaks.peakGflops > 0)) return std::nullopt;
  const double seconds = ms / 1e3;
  const double gbs = bytes / seconds / 1e9;
  const double gflops = flops / seconds / 1e9;
  RoofPoint r;
  r.intensity = bytes > 0 ? flops / bytes : std::numeric_limits<double>::infinity();
  const double slope = r.intensity * peaks.bandwidthGBs;  // GB/s * FLOP/B = GFLOP/s
  r.memoryBound = slope < peaks.peakGflops;
  r.attainableGflops = std::min(peaks.peakGflops, slope);
  // Memory bound: gflops / (intensity * bandwidth) is gbs / bandwidth, which also holds for a
  // kernel that does no arithmetic at all.
  r.fraction = r.memoryBound ? gbs / peaks.bandwidthGBs : gflops / peaks.peakGflops;
  return r;
}

std::optional<std::int64_t> LaunchProfile::bytes() const {
  if (!bytesRead || !bytesWritten) return std::nullopt;
  return *bytesRead + *bytesWritten;
}

void profileDerive(KernelProfile& profile) {
  double launchesMs = 0;
  bool allTimed = !profile.launches.empty();
  for (auto& l : profile.launches) {
    l.achievedGBs.reset();
    l.achievedGflops.reset();
    l.roof.reset();
    l.share.reset();
    if (!l.time) {
      allTimed = false;
      continue;
    }
    const double ms = l.time->medianMs;
    launchesMs += ms;
    if (profile.forward && profile.forward->medianMs > 0) {
      l.share = ms / profile.forward->medianMs;
    }
    if (!l.counted || !(ms > 0) || !l.bytes() || !l.flops) continue;
    const double bytes = static_cast<double>(*l.bytes());
    const double flops = static_cast<double>(*l.flops);
    l.achievedGBs = bytes / (ms / 1e3) / 1e9;
    l.achievedGflops = flops / (ms / 1e3) / 1e9;
    l.roof = roofPoint(bytes, flops, ms, profile.device);
  }
  profile.launchesShare.reset();
  if (allTimed && profile.forward && profile.forward->medianMs > 0) {
    profile.launchesShare = launchesMs / profile.forward->medianMs;
  }
}

KernelProfile profileFromFacts(const json& timed, const json& counted, const DevicePeaks& device) {
  KernelProfile p;
  p.device = device;
  if (!timed.is_object()) {
    p.error = ProfileError{"infrastructure", "the profile stage reported nothing", "", {}};
    return p;
  }
  p.timer = timed.value("timer", std::string());
  p.calls = timed.value("calls", 0);
  p.warmup = timed.value("warmup", 0);
  p.callsMatching = timed.value("calls_matching", 0);
  p.forward = spreadOf(numbers(timed.value("forward_ms", json::array())));
  p.error = errorFromFacts(timed, "run");
  const json launches = timed.value("launches", json::array());
  if (launches.is_array()) {
    for (std::size_t i = 0; i < launches.size(); ++i) {
      p.launches.push_back(launchFromFacts(launches[i], static_cast<int>(i)));
    }
  }
  if (!p.error) pairCounts(p, counted);
  profileDerive(p);
  return p;
}

// ---- JSON ---------------------------------------------------------------------------------

void to_json(json& j, const DevicePeaks& d) {
  j = {{"name", d.name},
       {"backend", d.backend},
       {"bandwidth_gbs", d.bandwidthGBs},
       {"peak_gflops", d.peakGflops},
       {"method", d.method}};
}
void from_json(const json& j, DevicePeaks& d) {
  d.name = j.value("name", "");
  d.backend = j.value("backend", "");
  d.bandwidthGBs = j.value("bandwidth_gbs", 0.0);
  d.peakGflops = j.value("peak_gflops", 0.0);
  d.method = j.value("method", "");
}

void to_json(json& j, const TimeSpread& t) {
  j = {{"samples", t.samples}, {"median_ms", t.medianMs}, {"min_ms", t.minMs},
       {"max_ms", t.maxMs},    {"q1_ms", t.q1Ms},         {"q3_ms", t.q3Ms}};
}
void from_json(const json& j, TimeSpread& t) {
  t.samples = j.value("samples", 0);
  t.medianMs = j.value("median_ms", 0.0);
  t.minMs = j.value("min_ms", 0.0);
  t.maxMs = j.value("max_ms", 0.0);
  t.q1Ms = j.value("q1_ms", 0.0);
  t.q3Ms = j.value("q3_ms", 0.0);
}

void to_json(json& j, const RoofPoint& r) {
  // JSON has no infinity: a kernel that moves no bytes has no finite intensity.
  j = {{"intensity", std::isfinite(r.intensity) ? json(r.intensity) : json()},
       {"attainable_gflops", r.attainableGflops},
       {"bound", r.memoryBound ? "memory" : "compute"},
       {"fraction", r.fraction}};
}
void from_json(const json& j, RoofPoint& r) {
  const json intensity = j.value("intensity", json());
  r.intensity =
      intensity.is_number() ? intensity.get<double>() : std::numeric_limits<double>::infinity();
  r.attainableGflops = j.value("attainable_gflops", 0.0);
  r.memoryBound = j.value("bound", "") == "memory";
  r.fraction = j.value("fraction", 0.0);
}

void to_json(json& j, const LaunchProfile& l) {
  j = {{"index", l.index},
       {"kernel", l.kernel},
       {"launch_line", optionalJson(l.launchLine)},
       {"def_line", optionalJson(l.defLine)},
       {"grid", l.grid},
       {"time", optionalJson(l.time)},
       {"counted", l.counted},
       {"not_counted_reason", l.counted ? json() : json(l.notCountedReason)},
       {"bytes_read", optionalJson(l.bytesRead)},
       {"bytes_written", optionalJson(l.bytesWritten)},
       {"bytes", optionalJson(l.bytes())},
       {"flops", optionalJson(l.flops)},
       {"achieved_gbs", optionalJson(l.achievedGBs)},
       {"achieved_gflops", optionalJson(l.achievedGflops)},
       {"roof", optionalJson(l.roof)},
       {"share", optionalJson(l.share)}};
}
void from_json(const json& j, LaunchProfile& l) {
  l.index = j.value("index", 0);
  l.kernel = j.value("kernel", "");
  l.launchLine = optionalOf<int>(j, "launch_line");
  l.defLine = optionalOf<int>(j, "def_line");
  l.grid = j.value("grid", std::vector<std::int64_t>{});
  l.time = optionalOf<TimeSpread>(j, "time");
  l.counted = j.value("counted", false);
  const json reason = j.value("not_counted_reason", json());
  l.notCountedReason = reason.is_string() ? reason.get<std::string>() : "";
  l.bytesRead = optionalOf<std::int64_t>(j, "bytes_read");
  l.bytesWritten = optionalOf<std::int64_t>(j, "bytes_written");
  l.flops = optionalOf<std::int64_t>(j, "flops");
  l.achievedGBs = optionalOf<double>(j, "achieved_gbs");
  l.achievedGflops = optionalOf<double>(j, "achieved_gflops");
  l.roof = optionalOf<RoofPoint>(j, "roof");
  l.share = optionalOf<double>(j, "share");
}

void to_json(json& j, const ProfileError& e) {
  j = {
      {"stage", e.stage}, {"message", e.message}, {"file", e.file}, {"line", optionalJson(e.line)}};
}
void from_json(const json& j, ProfileError& e) {
  e.stage = j.value("stage", "");
  e.message = j.value("message", "");
  e.file = j.value("file", "");
  e.line = optionalOf<int>(j, "line");
}

void to_json(json& j, const KernelProfile& p) {
  j = {{"candidate", p.candidate},
       {"reference", p.reference},
       {"device", p.device},
       {"timer", p.timer},
       {"calls", p.calls},
       {"warmup", p.warmup},
       {"calls_matching", p.callsMatching},
       {"forward", optionalJson(p.forward)},
       {"launches", p.launches},
       {"launches_share", optionalJson(p.launchesShare)},
       {"count_note", p.countNote.empty() ? json() : json(p.countNote)},
       {"error", optionalJson(p.error)}};
}
void from_json(const json& j, KernelProfile& p) {
  p.candidate = j.value("candidate", "");
  p.reference = j.value("reference", "");
  p.device = j.value("device", DevicePeaks{});
  p.timer = j.value("timer", "");
  p.calls = j.value("calls", 0);
  p.warmup = j.value("warmup", 0);
  p.callsMatching = j.value("calls_matching", 0);
  p.forward = optionalOf<TimeSpread>(j, "forward");
  p.launches = j.value("launches", std::vector<LaunchProfile>{});
  p.launchesShare = optionalOf<double>(j, "launches_share");
  const json note = j.value("count_note", json());
  p.countNote = note.is_string() ? note.get<std::string>() : "";
  p.error = optionalOf<ProfileError>(j, "error");
}

}  // namespace crucible
