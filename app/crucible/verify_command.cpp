// `crucible verify`: runs the verification pipeline on two files and prints, stores and exits
// with the verdict.
#include <filesystem>
#include <iostream>
#include <optional>
#include <stop_token>

#include "app/crucible/cli_support.h"
#include "app/crucible/commands.h"
#include "app/crucible/interrupt.h"
#include "core/store/store.h"
#include "core/verify/report_text.h"
#include "core/verify/verifier.h"

namespace crucible::cli {

namespace {
const std::string kVerifyUsage =
    std::string(
        "usage: crucible verify REFERENCE.py CANDIDATE.py [options]\n"
        "\n"
        "  CANDIDATE may be a Python file or a raw model response (the last fenced block that\n"
        "  defines ModelNew is verified; the text before it is kept as the plan).\n"
        "\n"
        "options:\n") +
    kVerifyOptionsHelp +
    "  --db FILE                  database to store the run in (default: the user's data folder)\n"
    "  --no-db                    do not store the run\n"
    "  --keep-job                 keep the job folder (inputs, outputs, logs) and print its path\n"
    "  --json                     print one JSON object instead of text\n"
    "\n"
    "exit codes: 0 verified; 1 incorrect, cheating or invalid; 2 bad usage or bad reference;\n"
    "3 error (timeout, crash, infrastructure)\n";

struct VerifyOptions {
  VerifyRequest request;
  bool json = false;
  bool store = true;
  std::string db;
};

/// Parses the arguments; throws BadInput with a message for the user.
VerifyOptions parse(const std::vector<std::string>& args) {
  VerifyOptions o;
  std::vector<std::string> positional;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (parseVerifyOption(args, i, o.request)) continue;
    if (a == "--db") {
      o.db = optionValue(args, i);
    } else if (a == "--no-db") {
      o.store = false;
    } else if (a == "--keep-job") {
      o.request.keepJobDir = true;
    } else if (a == "--json") {
      o.json = true;
    } else if (!a.empty() && a[0] == '-') {
      throw BadInput("unknown option " + a);
    } else {
      positional.push_back(a);
    }
  }
  if (positional.size() != 2) throw BadInput("expected REFERENCE.py and CANDIDATE.py");
  o.request.referencePath = positional[0];
  o.request.candidatePath = positional[1];
  return o;
}

void storeOutcome(const VerifyOptions& o, const VerifyOutcome& outcome, std::ostream& err) {
  const std::string path = o.db.empty() ? store::Store::defaultDatabasePath() : o.db;
  store::Store db(path);
  store::VerificationRecord record;
  record.task = taskFor(o.request.referencePath, outcome.referenceSource);
  record.candidate.origin = outcome.candidateFromResponse ? "response" : "file";
  record.candidate.rawResponse = outcome.candidateFromResponse ? outcome.candidateSource : "";
  record.candidate.plan = outcome.evaluation.plan;
  record.candidate.code = outcome.candidateCode;
  record.candidate.path = std::filesystem::absolute(o.request.candidatePath).string();
  record.evaluation = outcome.evaluation;
  const auto ids = db.recordVerification(record);
  err << "stored as session " << ids.sessionId << " in " << path << "\n";
}
}  // namespace

int runVerify(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  VerifyOptions options;
  if (auto exit = parseCommandLine(args, "verify", kVerifyUsage, parse, options, out, err))
    return *exit;

  watchForInterrupt();
  VerifyOutcome outcome;
  try {
    auto progress = [&](const VerifyProgress& p) {
      if (!options.json) err << "[" << p.stage << "] " << p.message << "\n";
    };
    outcome = verify(options.request, progress, interruptSource().get_token());
  } catch (const BadInput& e) {
    err << "crucible verify: " << e.what() << "\n";
    // With --json, callers still get one object: no verdict, and why.
    if (options.json) {
      out << nlohmann::json{{"verdict", nullptr},
                            {"error",
                             {{"stage", "usage"}, {"message", e.what()}, {"blame", "user"}}}}
                 .dump(2)
          << "\n";
    }
    return 2;
  } catch (const std::exception& e) {
    err << "crucible verify: error: " << e.what() << "\n";
    if (options.json) {
      Evaluation failed;
      failed.verdict = Verdict::Error;
      failed.backend = options.request.backend;
      failed.error = EvalError{"infrastructure", e.what(), "infrastructure"};
      failed.reward.preset = options.request.rewardPreset;
      out << nlohmann::json(failed).dump(2) << "\n";
    }
    return 3;
  }
  if (!outcome.jobDir.empty()) err << "job folder kept: " << outcome.jobDir << "\n";
  if (interruptSource().get_token().stop_requested()) {
    err << "crucible verify: interrupted; nothing was stored\n";
    return 3;
  }

  if (options.store) {
    try {
      storeOutcome(options, outcome, err);
    } catch (const std::exception& e) {
      // The verdict stands; say clearly that it was not kept.
      err << "crucible verify: the result was NOT stored: " << e.what() << "\n";
    }
  }
  if (options.json) {
    out << nlohmann::json(outcome.evaluation).dump(2) << "\n";
  } else {
    out << renderEvaluationText(outcome.evaluation);
  }
  return exitCodeFor(outcome.evaluation.verdict);
}

}  // namespace crucible::cli
