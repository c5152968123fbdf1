#include "core/verify/flag.h"

#include <stdexcept>

namespace crucible {

std::string_view toString(Severity severity) {
  return severity == Severity::Cheat ? "cheat" : "warning";
}

std::optional<Severity> severityFromString(std::string_view text) {
  if (text == "cheat") return Severity::Cheat;
  if (text == "warning") return Severity::Warning;
  return std::nullopt;
}

const std::vector<FlagInfo>& flagCatalogue() {
  using enum Severity;
  static const std::vector<FlagInfo> catalogue = {
      {"no_triton_kernel", Cheat, "no @triton.jit kernel in the candidate"},
      {"kernel_not_launched", Cheat, "no Triton kernel launched during ModelNew.forward"},
      {"torch_compute_in_forward", Cheat,
       "PyTorch computed part of the answer during forward (beyond allocation, views, copies)"},
      {"non_torch_compute", Cheat, "the answer was computed outside Triton and PyTorch"},
      {"kernel_output_unused", Cheat,
       "with every Triton launch made a no-op the output is the same"},
      {"exception_fallback", Cheat, "a try/except (or equivalent) can route around the kernels"},
      {"reference_reuse", Cheat, "ModelNew inherits from, wraps or calls the reference model"},
      {"output_not_written", Cheat, "output elements the candidate never wrote"},
      {"input_mutation", Cheat, "the candidate changed its inputs"},
      {"input_insensitive_output", Cheat,
       "the output does not follow the inputs while the reference's does"},
      {"degenerate_reference", Warning,
       "the task's outputs are too small or constant for an absolute tolerance to mean anything"},
      {"shape_specialized", Cheat,
       "correct at the given shapes, wrong at an alternative batch size the reference accepts"},
      {"output_caching", Cheat, "stale results returned for new inputs of the same shape"},
      {"precision_downgrade", Warning, "computes in lower precision than the reference's dtype"},
      {"concurrency_escape", Cheat, "threads, processes or side streams started by the candidate"},
      {"lazy_output", Cheat, "the output is not a plain dense torch.Tensor with its own storage"},
      {"harness_tampering", Cheat,
       "patching timers, synchronisation, torch/triton/harness functions or builtins, or "
       "introspecting harness objects"},
      {"sandbox_violation", Cheat,
       "touched files outside the scratch folder, the network, or spawned programs"},
      {"nondeterministic_output", Warning, "two runs on the same input disagree beyond rounding"},
      {"out_of_bounds_access", Warning,
       "a kernel loaded, stored or updated memory outside its tensor argument's storage "
       "(opencl backend, bounds-checked first trial)"},
      {"implausible_speedup", Warning,
       "speedup beyond what the device's bandwidth and arithmetic rate allow, or above the "
       "ceiling"},
      {"unconfirmed_timing", Warning,
       "the time measured inside the candidate's process was not confirmed by the interval "
       "measured outside it; the outside time is used"},
      {"unpaired_timing", Warning,
       "the reference's and the candidate's timed rounds did not alternate (a side missed its "
       "turns or its timer failed): load may have fallen on one side only"},
      {"contended_timing", Warning,
       "other work competed for the CPU while the rounds were timed on it: the speedup is "
       "reported as noisy"},
      {"impossible_timing", Cheat,
       "a measured time below the physical floor: the task's bytes over the device's measured "
       "bandwidth, or its arithmetic over its peak rate"},
  };
  return catalogue;
}

const FlagInfo* findFlag(std::string_view id) {
  for (const auto& info : flagCatalogue()) {
    if (info.id == id) return &info;
  }
  return nullptr;
}

Flag makeFlag(std::string_view id, std::string message, std::optional<int> line,
              nlohmann::json evidence) {
  const FlagInfo* info = findFlag(id);
  if (info == nullptr) throw std::invalid_argument("unknown flag id: " + std::string(id));
  return Flag{std::string(id), info->severity, std::move(message), line, std::move(evidence)};
}

void to_json(nlohmann::json& j, const Flag& flag) {
  j = nlohmann::json{{"id", flag.id},
                     {"severity", toString(flag.severity)},
                     {"message", flag.message},
                     {"line", flag.line ? nlohmann::json(*flag.line) : nlohmann::json(nullptr)},
                     {"evidence", flag.evidence}};
}

void from_json(const nlohmann::json& j, Flag& flag) {
  flag.id = j.at("id").get<std::string>();
  auto severity = severityFromString(j.at("severity").get<std::string>());
  if (!severity) throw std::invalid_argument("bad flag severity in JSON");
  flag.severity = *severity;
  flag.message = j.value("message", "");
  flag.line = j.contains("line") && !j["line"].is_null() ? std::optional<int>(j["line"].get<int>())
                                                         : std::nullopt;
  flag.evidence = j.value("evidence", nlohmann::json::object());
}

}  // namespace crucible
