// corpus_check CRUCIBLE_BIN CASE_DIR
//
// Runs `crucible verify` on one corpus case (tests/corpus/{pass,fail}/<case>/) and checks the
// outcome against the case's case.json: the verdict, the exact set of cheat-severity flags, the
// warnings that must be present, error.stage, and that the exit code agrees with the verdict.
// Prints a readable diff on mismatch. Exit status: 0 match, 1 mismatch, 2 could not check.
//
// case.json:
//   {"reference": "vector_add",            // tests/corpus/references/<name>.py
//    "verdict": "cheating",                // or a list of acceptable verdicts
//    "flags": ["torch_compute_in_forward"],// exact set of cheat flags
//    "warnings": ["degenerate_reference"], // optional: warnings that must be present
//    "lines": {"torch_compute_in_forward": 29}, // optional: the candidate line a flag points at
//    "error_stage": null,                  // null: not checked; a string or list: must match
//    "timeout": 60,                        // --timeout passed to crucible
//    "note": "why"}
// or, where several outcomes are acceptable, "accept": [{verdict, flags, warnings?,
// error_stage?, why?}, ...] instead of the top-level verdict/flags/warnings/error_stage.

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// `text` as one POSIX shell word.
std::string shellQuote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string joinSet(const std::set<std::string>& items) {
  std::string out = "[";
  bool first = true;
  for (const auto& s : items) {
    out += (first ? "" : ", ") + s;
    first = false;
  }
  return out + "]";
}

std::set<std::string> stringSet(const json& j) {
  std::set<std::string> out;
  if (j.is_string()) {
    out.insert(j.get<std::string>());
  } else if (j.is_array()) {
    for (const auto& item : j) {
      if (item.is_string()) out.insert(item.get<std::string>());
    }
  }
  return out;
}

struct RunResult {
  std::string output;
  int exitCode = -1;
  int signal = 0;
  double seconds = 0;
};

/// Runs `command` through the shell, capturing its stdout (stderr passes through).
std::optional<RunResult> run(const std::string& command) {
  const auto start = std::chrono::steady_clock::now();
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  RunResult result;
  std::array<char, 65536> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    result.output.append(buffer.data(), n);
  }
  const int status = ::pclose(pipe);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (status == -1) return std::nullopt;
  if (WIFEXITED(status)) result.exitCode = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

/// The JSON document in `text`: all of it, or failing that the span from the first '{' to the
/// last '}' (in case the CLI printed a line before or after it).
std::optional<json> parseReport(const std::string& text) {
  auto parsed = json::parse(text, nullptr, false);
  if (!parsed.is_discarded() && parsed.is_object()) return parsed;
  const auto first = text.find('{');
  const auto last = text.rfind('}');
  if (first == std::string::npos || last == std::string::npos || last < first) return std::nullopt;
  parsed = json::parse(text.substr(first, last - first + 1), nullptr, false);
  if (!parsed.is_discarded() && parsed.is_object()) return parsed;
  return std::nullopt;
}

int exitCodeForVerdict(const std::string& verdict) {
  if (verdict == "verified") return 0;
  if (verdict == "incorrect" || verdict == "cheating" || verdict == "invalid") return 1;
  if (verdict == "error") return 3;
  return -1;
}

struct Actual {
  std::string verdict;
  std::set<std::string> cheats;
  std::set<std::string> warnings;
  std::optional<std::string> errorStage;
  std::map<std::string, std::string> messages;  // flag id -> its message
  std::map<std::string, int> lines;             // flag id -> the candidate line it points at
};

Actual readActual(const json& report) {
  Actual a;
  a.verdict = report.value("verdict", std::string("<missing>"));
  if (report.contains("flags") && report["flags"].is_array()) {
    for (const auto& f : report["flags"]) {
      if (!f.is_object() || !f.contains("id") || !f["id"].is_string()) continue;
      const auto id = f["id"].get<std::string>();
      const auto severity = f.value("severity", std::string("cheat"));
      (severity == "warning" ? a.warnings : a.cheats).insert(id);
      a.messages[id] = f.contains("message") && f["message"].is_string()
                           ? f["message"].get<std::string>()
                           : std::string();
      if (f.contains("line") && f["line"].is_number_integer()) a.lines[id] = f["line"].get<int>();
    }
  }
  if (report.contains("error") && report["error"].is_object() &&
      report["error"].contains("stage") && report["error"]["stage"].is_string()) {
    a.errorStage = report["error"]["stage"].get<std::string>();
  }
  return a;
}

/// Differences between one expected outcome and the actual one; empty when they match.
std::vector<std::string> differences(const json& expected, const Actual& actual) {
  std::vector<std::string> diff;
  const auto verdicts = stringSet(expected.value("verdict", json()));
  if (!verdicts.count(actual.verdict)) {
    diff.push_back("verdict: expected " + joinSet(verdicts) + ", got " + actual.verdict);
  }
  const auto flags = stringSet(expected.value("flags", json::array()));
  std::set<std::string> missing, unexpected;
  std::set_difference(flags.begin(), flags.end(), actual.cheats.begin(), actual.cheats.end(),
                      std::inserter(missing, missing.end()));
  std::set_difference(actual.cheats.begin(), actual.cheats.end(), flags.begin(), flags.end(),
                      std::inserter(unexpected, unexpected.end()));
  if (!missing.empty()) diff.push_back("cheat flags expected but not raised: " + joinSet(missing));
  if (!unexpected.empty()) {
    diff.push_back("cheat flags raised but not expected: " + joinSet(unexpected));
  }
  const auto warnings = stringSet(expected.value("warnings", json::array()));
  std::set<std::string> missingWarnings;
  std::set_difference(warnings.begin(), warnings.end(), actual.warnings.begin(),
                      actual.warnings.end(), std::inserter(missingWarnings, missingWarnings.end()));
  if (!missingWarnings.empty()) {
    diff.push_back("warnings expected but not raised: " + joinSet(missingWarnings));
  }
  const json* wantLines = expected.contains("lines") ? &expected["lines"] : nullptr;
  for (auto want = wantLines ? wantLines->begin() : json::const_iterator();
       wantLines && want != wantLines->end(); ++want) {
    const std::string& id = want.key();
    const auto it = actual.lines.find(id);
    if (it == actual.lines.end() || it->second != want.value().get<int>()) {
      diff.push_back(id + ": expected at line " + want.value().dump() + ", got " +
                     (it == actual.lines.end() ? std::string("no line")
                                               : "line " + std::to_string(it->second)));
    }
  }
  const json stage = expected.value("error_stage", json());
  if (!stage.is_null()) {
    const auto stages = stringSet(stage);
    if (!actual.errorStage || !stages.count(*actual.errorStage)) {
      diff.push_back("error.stage: expected " + joinSet(stages) + ", got " +
                     (actual.errorStage ? *actual.errorStage : std::string("no error")));
    }
  }
  return diff;
}

std::string describe(const json& expected) {
  std::ostringstream out;
  out << "verdict " << joinSet(stringSet(expected.value("verdict", json()))) << ", cheat flags "
      << joinSet(stringSet(expected.value("flags", json::array())));
  const auto warnings = stringSet(expected.value("warnings", json::array()));
  if (!warnings.empty()) out << ", warnings including " << joinSet(warnings);
  const json stage = expected.value("error_stage", json());
  if (!stage.is_null()) out << ", error.stage " << joinSet(stringSet(stage));
  if (expected.contains("why") && expected["why"].is_string()) {
    out << " (" << expected["why"].get<std::string>() << ")";
  }
  return out.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: corpus_check CRUCIBLE_BIN CASE_DIR\n";
    return 2;
  }
  const std::string crucible = argv[1];
  fs::path caseDir = fs::absolute(argv[2]).lexically_normal();
  if (caseDir.filename().empty()) caseDir = caseDir.parent_path();  // "case/" -> "case"
  const std::string caseName =
      caseDir.parent_path().filename().string() + "/" + caseDir.filename().string();

  if (::access(crucible.c_str(), X_OK) != 0) {
    std::cerr << caseName << ": cannot run " << crucible << " (not built or not executable)\n";
    return 2;
  }

  json spec;
  try {
    std::ifstream in(caseDir / "case.json");
    if (!in) throw std::runtime_error("cannot open");
    spec = json::parse(in);
  } catch (const std::exception& e) {
    std::cerr << caseName << ": bad case.json: " << e.what() << "\n";
    return 2;
  }

  const fs::path reference = caseDir.parent_path().parent_path() / "references" /
                             (spec.value("reference", std::string()) + ".py");
  fs::path candidate = caseDir / "candidate.py";
  if (!fs::exists(candidate)) candidate = caseDir / "response.md";
  if (!fs::exists(reference) || !fs::exists(candidate)) {
    std::cerr << caseName << ": missing " << (fs::exists(reference) ? candidate : reference)
              << "\n";
    return 2;
  }

  std::vector<json> accepted;
  if (spec.contains("accept") && spec["accept"].is_array() && !spec["accept"].empty()) {
    for (const auto& outcome : spec["accept"]) accepted.push_back(outcome);
  } else {
    json outcome = {{"verdict", spec.value("verdict", json())},
                    {"flags", spec.value("flags", json::array())},
                    {"warnings", spec.value("warnings", json::array())},
                    {"error_stage", spec.value("error_stage", json())},
                    {"lines", spec.value("lines", json::object())}};
    accepted.push_back(outcome);
  }
  const int timeout = spec.value("timeout", 60);

  // A database of its own, so cases can run in parallel and leave nothing behind.
  std::string scratchTemplate = (fs::temp_directory_path() / "crucible-corpus-XXXXXX").string();
  if (::mkdtemp(scratchTemplate.data()) == nullptr) {
    std::cerr << caseName << ": cannot make a temporary folder\n";
    return 2;
  }
  const fs::path scratch = scratchTemplate;
  const fs::path db = scratch / "corpus.db";

  // The interpreter by default; CRUCIBLE_CORPUS_BACKEND=cuda runs the same corpus on a GPU,
  // =opencl on Crucible's Triton-to-OpenCL compiler (PoCL on the CPU).
  const char* backendEnv = std::getenv("CRUCIBLE_CORPUS_BACKEND");
  const std::string backend = backendEnv && *backendEnv ? backendEnv : "interpret";
  // CPU timings mean little here: a few reps prove the mechanism.
  const int reps = backend == "interpret" || backend == "opencl" ? 3 : 20;
  std::ostringstream command;
  command << shellQuote(crucible) << " verify " << shellQuote(reference.string()) << " "
          << shellQuote(candidate.string()) << " --backend " << shellQuote(backend) << " --json"
          << " --no-compile-baseline --reps " << reps << " --timeout " << timeout << " --db "
          << shellQuote(db.string()) << " </dev/null";
  std::cout << "case " << caseName << "\n$ " << command.str() << "\n" << std::flush;

  const auto result = run(command.str());
  std::error_code ec;
  fs::remove_all(scratch, ec);
  if (!result) {
    std::cerr << caseName << ": could not run the command\n";
    return 2;
  }
  if (result->signal != 0) {
    std::cout << "FAIL " << caseName << ": crucible was killed by signal " << result->signal
              << "\n";
    return 1;
  }

  const auto report = parseReport(result->output);
  if (!report) {
    std::cout << "FAIL " << caseName << ": crucible (exit " << result->exitCode
              << ") printed no JSON report. Output begins:\n"
              << result->output.substr(0, 2000) << "\n";
    return 1;
  }
  const Actual actual = readActual(*report);

  std::vector<std::string> exitProblems;
  const int wantExit = exitCodeForVerdict(actual.verdict);
  if (wantExit < 0) {
    exitProblems.push_back("unknown verdict '" + actual.verdict + "'");
  } else if (result->exitCode != wantExit) {
    exitProblems.push_back("exit code " + std::to_string(result->exitCode) +
                           " does not match verdict " + actual.verdict + " (expected " +
                           std::to_string(wantExit) + ")");
  }

  std::vector<std::vector<std::string>> diffs;
  bool matched = false;
  for (const auto& outcome : accepted) {
    diffs.push_back(differences(outcome, actual));
    if (diffs.back().empty()) matched = true;
  }

  std::ostringstream got;
  got << "verdict " << actual.verdict << ", cheat flags " << joinSet(actual.cheats) << ", warnings "
      << joinSet(actual.warnings) << ", error.stage "
      << (actual.errorStage ? *actual.errorStage : std::string("-")) << ", exit "
      << result->exitCode;

  if (matched && exitProblems.empty()) {
    std::cout << "PASS " << caseName << ": " << got.str() << " (" << result->seconds << " s)\n";
    return 0;
  }

  std::cout << "FAIL " << caseName << " (" << result->seconds << " s)\n  got:      " << got.str()
            << "\n";
  for (const auto& problem : exitProblems) std::cout << "  - " << problem << "\n";
  if (!matched) {
    for (std::size_t i = 0; i < accepted.size(); ++i) {
      std::cout << "  expected" << (accepted.size() > 1 ? " (one of)" : "") << ": "
                << describe(accepted[i]) << "\n";
      for (const auto& d : diffs[i]) std::cout << "    - " << d << "\n";
    }
  }
  for (const auto& [id, message] : actual.messages) {
    std::cout << "  flag " << id << ": " << message << "\n";
  }
  if (report->contains("error") && (*report)["error"].is_object()) {
    std::cout << "  error: " << (*report)["error"].dump() << "\n";
  }
  if (spec.contains("note") && spec["note"].is_string()) {
    std::cout << "  case note: " << spec["note"].get<std::string>() << "\n";
  }
  return 1;
}
