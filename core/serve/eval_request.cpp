#include "core/serve/eval_request.h"

#include <cctype>
#include <cmath>
#include <set>

#include "core/util/sha256.h"
#include "core/verify/evaluation.h"

namespace crucible::serve {

namespace {

using nlohmann::json;

const std::set<std::string> kBackends{"", "auto", "interpret", "cuda", "opencl"};
const std::set<std::string> kPresets{"tritonrl", "drtriton", "kevin", "kernelgym"};
// Fields KernelGYM's clients send that change nothing here; accepted so those clients work.
const std::set<std::string> kIgnored{"toolkit",         "backend_adapter",   "workflow",
                                     "priority",        "device_preference", "force_refresh",
                                     "num_perf_trials", "entry_point",       "uuid",
                                     "is_valid",        "metadata",          "workflow_timeout"};
const std::set<std::string> kKnown{"task_id",       "reference_code",     "kernel_code", "response",
                                   "backend",       "num_correct_trials", "trials",      "timeout",
                                   "reward_preset", "compile_baseline",   "seed"};

std::string text(const json& body, const char* field, bool required, std::size_t maxBytes) {
  if (!body.contains(field) || body[field].is_null()) {
    if (required) throw RequestError(400, std::string("missing field '") + field + "'");
    return {};
  }
  if (!body[field].is_string()) {
    throw RequestError(400, std::string("field '") + field + "' must be a string");
  }
  std::string value = body[field].get<std::string>();
  if (value.size() > maxBytes) {
    throw RequestError(413, std::string("field '") + field + "' is " +
                                std::to_string(value.size()) + " bytes; at most " +
                                std::to_string(maxBytes) + " are accepted");
  }
  return value;
}

double number(const json& body, const char* field, double fallback, double low, double high) {
  if (!body.contains(field) || body[field].is_null()) return fallback;
  if (!body[field].is_number()) {
    throw RequestError(400, std::string("field '") + field + "' must be a number");
  }
  const double value = body[field].get<double>();
  if (!std::isfinite(value) || value < low || value > high) {
    throw RequestError(400, std::string("field '") + field + "' must be between " +
                                json(low).dump() + " and " + json(high).dump());
  }
  return value;
}

}  // namespace

std::string EvalRequest::digest() const {
  json j = *this;
  j.erase("task_id");
  return util::sha256Hex(j.dump());
}

EvalRequest parseEvalRequest(const json& body, const RequestLimits& limits) {
  if (!body.is_object()) throw RequestError(400, "the request body must be a JSON object");
  for (const auto& [key, value] : body.items()) {
    if (!kKnown.count(key) && !kIgnored.count(key)) {
      throw RequestError(400, "unknown field '" + key + "'");
    }
  }
  EvalRequest r;
  r.taskId = text(body, "task_id", false, 200);
  for (const char c : r.taskId) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.' &&
        c != ':') {
      throw RequestError(400, "field 'task_id' may hold letters, digits and - _ . : only");
    }
  }
  r.referenceCode = text(body, "reference_code", true, limits.maxCodeBytes);
  // KernelGYM names the candidate kernel_code; a raw model response may come as `response`.
  r.kernelCode = text(body, "kernel_code", false, limits.maxCodeBytes);
  if (r.kernelCode.empty()) r.kernelCode = text(body, "response", false, limits.maxCodeBytes);
  if (r.kernelCode.empty()) throw RequestError(400, "missing field 'kernel_code'");
  if (r.referenceCode.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw RequestError(400, "field 'reference_code' is empty");
  }
  r.backend = text(body, "backend", false, 32);
  if (!kBackends.count(r.backend)) {
    throw RequestError(400, "field 'backend' must be auto, interpret, cuda or opencl");
  }
  const double trials = body.contains("trials")
                            ? number(body, "trials", 5, 1, limits.maxTrials)
                            : number(body, "num_correct_trials", 5, 1, limits.maxTrials);
  r.trials = static_cast<int>(trials);
  r.timeoutSeconds = number(body, "timeout", 300, 1, limits.maxTimeoutSeconds);
  r.rewardPreset = text(body, "reward_preset", false, 32);
  if (r.rewardPreset.empty()) r.rewardPreset = "tritonrl";
  if (!kPresets.count(r.rewardPreset)) {
    throw RequestError(400, "field 'reward_preset' must be tritonrl, drtriton, kevin or kernelgym");
  }
  if (body.contains("compile_baseline")) {
    if (!body["compile_baseline"].is_boolean()) {
      throw RequestError(400, "field 'compile_baseline' must be true or false");
    }
    r.compileBaseline = body["compile_baseline"].get<bool>();
  }
  r.seed = static_cast<int>(number(body, "seed", 42, 0, 2147483647));
  return r;
}

json failedResult(const std::string& stage, const std::string& message, const std::string& blame,
                  const EvalRequest& request) {
  Evaluation failed;
  failed.verdict = Verdict::Error;
  failed.backend = request.backend;
  failed.error = EvalError{stage, message, blame};
  failed.reward.preset = request.rewardPreset;
  json evaluation = failed;
  if (blame == "user") evaluation["verdict"] = nullptr;  // no verdict: the request was bad
  return json{{"evaluation", evaluation}};
}

void to_json(json& j, const EvalRequest& r) {
  j = json{{"task_id", r.taskId},
           {"reference_code", r.referenceCode},
           {"kernel_code", r.kernelCode},
           {"backend", r.backend},
           {"trials", r.trials},
           {"timeout", r.timeoutSeconds},
           {"reward_preset", r.rewardPreset},
           {"compile_baseline", r.compileBaseline},
           {"seed", r.seed}};
}

void from_json(const json& j, EvalRequest& r) {
  r.taskId = j.value("task_id", std::string());
  r.referenceCode = j.at("reference_code").get<std::string>();
  r.kernelCode = j.at("kernel_code").get<std::string>();
  r.backend = j.value("backend", std::string());
  r.trials = j.value("trials", 5);
  r.timeoutSeconds = j.value("timeout", 300.0);
  r.rewardPreset = j.value("reward_preset", std::string("tritonrl"));
  r.compileBaseline = j.value("compile_baseline", true);
  r.seed = j.value("seed", 42);
}

}  // namespace crucible::serve
