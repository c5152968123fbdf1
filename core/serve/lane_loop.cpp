#include "core/serve/lane_loop.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "core/util/locations.h"
#include "core/util/sha256.h"
#include "core/verify/bad_input.h"
#include "core/verify/baseline_keeper.h"
#include "core/verify/reference_cache.h"
#include "core/verify/verifier.h"

namespace crucible::serve {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A trainer sends many candidates per reference: a few runs kept, and two reference timers.
constexpr std::size_t kKeptReferenceRuns = 8;
constexpr std::size_t kKeptTimers = 2;

}  // namespace

LaneVerifier::LaneVerifier(LaneOptions options)
    : options_(std::move(options)),
      references_(std::make_shared<ReferenceCache>(kKeptReferenceRuns)),
      timers_(std::make_shared<BaselineKeeper>(kKeptTimers)) {
  if (options_.scratch.empty()) {
    options_.scratch =
        (fs::path(temporaryRoot()) / ("crucible-lane-" + std::to_string(::getpid()))).string();
  }
  fs::create_directories(options_.scratch);
}

LaneVerifier::~LaneVerifier() {
  std::error_code ignored;
  fs::remove_all(options_.scratch, ignored);
}

std::string LaneVerifier::referenceFile(const std::string& code) {
  // Named by its content: a reference's runs are found again however its jobs are named.
  const fs::path dir = fs::path(options_.scratch) / util::sha256Hex(code).substr(0, 16);
  const fs::path file = dir / "reference.py";
  if (!fs::exists(file)) {
    fs::create_directories(dir);
    std::ofstream(file, std::ios::binary) << code;
  }
  return file.string();
}

json LaneVerifier::evaluate(const EvalRequest& request) {
  VerifyRequest v;
  v.referencePath = referenceFile(request.referenceCode);
  v.candidatePath = (fs::path(options_.scratch) / "candidate.py").string();  // names it only
  v.candidateText = request.kernelCode;
  v.backend = request.backend.empty() ? options_.backend : request.backend;
  v.trials = request.trials;
  v.seed = request.seed;
  v.rewardPreset = request.rewardPreset;
  v.timeoutSeconds = request.timeoutSeconds;
  v.compileBaseline = request.compileBaseline;
  v.referenceCache = references_;
  v.baselineKeeper = timers_;
  try {
    const VerifyOutcome outcome = verify(v);
    return json{{"evaluation", outcome.evaluation},
                {"candidate_code", outcome.candidateCode},
                {"from_response", outcome.candidateFromResponse},
                {"reference_path", v.referencePath}};
  } catch (const BadInput& e) {
    return failedResult("usage", e.what(), "user", request);
  } catch (const std::exception& e) {
    return failedResult("infrastructure", e.what(), "infrastructure", request);
  }
}

int runLaneLoop(std::istream& in, std::ostream& out, const LaneOptions& options) {
  LaneVerifier lane(options);
  std::string resolved = options.backend;
  try {
    resolved = resolveBackend(options.backend);
  } catch (const std::exception& e) {
    out << json{{"ready", false}, {"error", e.what()}}.dump() << std::endl;
    return 2;
  }
  out << json{{"ready", true}, {"backend", resolved}, {"pid", ::getpid()}}.dump() << std::endl;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const json message = json::parse(line, nullptr, false);
    if (!message.is_object()) continue;
    if (message.value("op", "") == "quit") break;
    const std::string job = message.value("job", "");
    json result;
    try {
      result = lane.evaluate(message.at("request").get<EvalRequest>());
    } catch (const std::exception& e) {  // a malformed job line: the service's own error
      EvalRequest unknown;
      result = failedResult("infrastructure", std::string("bad job line: ") + e.what(),
                            "infrastructure", unknown);
    }
    result["job"] = job;
    out << result.dump(-1, ' ', false, json::error_handler_t::replace) << std::endl;
  }
  return 0;
}

}  // namespace crucible::serve
