#include "core/bench/run_settings.h"

namespace crucible::bench {

namespace {

using nlohmann::json;

std::string shrinkText(const std::optional<double>& f) {
  return f ? nlohmann::json(*f).dump() : "none";
}

}  // namespace

std::string RunSettings::differenceFrom(const RunSettings& o) const {
  std::string text;
  auto differ = [&](const std::string& what, const std::string& mine, const std::string& theirs) {
    if (mine != theirs) text += (text.empty() ? "" : ", ") + what + " " + mine + ", not " + theirs;
  };
  differ("model", model, o.model);
  differ("backend", backend, o.backend);
  differ("samples", std::to_string(samples), std::to_string(o.samples));
  differ("trials", std::to_string(trials), std::to_string(o.trials));
  differ("seed", std::to_string(seed), std::to_string(o.seed));
  differ("torch.compile baseline", compileBaseline ? "on" : "off",
         o.compileBaseline ? "on" : "off");
  differ("shrink", shrinkText(shrink), shrinkText(o.shrink));
  return text;
}

void to_json(json& j, const RunSettings& s) {
  j = json{{"task_dir", s.taskDir},
           {"levels", s.levels},
           {"model", s.model},
           {"backend", s.backend},
           {"samples", s.samples},
           {"trials", s.trials},
           {"seed", s.seed},
           {"compile_baseline", s.compileBaseline},
           {"shrink", s.shrink ? json(*s.shrink) : json(nullptr)}};
}

void from_json(const json& j, RunSettings& s) {
  s = RunSettings{};
  s.taskDir = j.value("task_dir", std::string());
  s.levels = j.value("levels", std::vector<std::string>{});
  s.model = j.value("model", std::string("synth"));
  s.backend = j.value("backend", std::string());
  s.samples = j.value("samples", 1);
  s.trials = j.value("trials", 5);
  s.seed = j.value("seed", 42);
  s.compileBaseline = j.value("compile_baseline", true);
  if (j.contains("shrink") && j.at("shrink").is_number()) s.shrink = j.at("shrink").get<double>();
}

}  // namespace crucible::bench
