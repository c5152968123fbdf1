// `crucible synth`: the built-in synthesizer's candidates for a reference, written without
// verifying them (for debugging the synthesizer; `crucible generate` verifies and searches).
#include <filesystem>
#include <fstream>
#include <iostream>

#include "app/crucible/cli_support.h"
#include "app/crucible/commands.h"
#include "app/crucible/interrupt.h"
#include "core/kernel_synth/synthesizer.h"
#include "core/verify/verifier.h"

namespace crucible::cli {

namespace {
constexpr const char* kSynthUsage =
    "usage: crucible synth REFERENCE.py [-n N] [--backend B] [--out DIR] [--json]\n"
    "\n"
    "  Traces the reference, partitions it into fusion groups and writes one Triton candidate\n"
    "  per tiling, without verifying them (`crucible verify REFERENCE CANDIDATE` does that).\n"
    "\n"
    "options:\n"
    "  -n N              tilings to propose (default 4)\n"
    "  --backend B       auto | interpret | cuda | opencl: the tile choices are made for it\n"
    "                    (default interpret; auto resolves as `crucible verify` does)\n"
    "  --out DIR         write candidate_K.py, plan_K.txt and graph.json into DIR\n"
    "  --json            print one JSON object: candidates [{label, plan, code}], unsupported,\n"
    "                    graph\n"
    "\n"
    "exit codes: 0 candidates written; 1 an op could not be lowered (listed by line);\n"
    "2 bad usage or a reference that does not load or trace; 3 infrastructure error\n";

struct SynthOptions {
  kernel_synth::SynthRequest request;
  std::string outDir;
  bool json = false;
};

SynthOptions parse(const std::vector<std::string>& args) {
  SynthOptions o;
  std::vector<std::string> positional;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-n") {
      const std::string& v = optionValue(args, i);
      try {
        std::size_t used = 0;
        o.request.maxCandidates = std::stoi(v, &used);
        if (used != v.size() || o.request.maxCandidates < 1) throw std::invalid_argument(v);
      } catch (const std::exception&) {
        throw BadInput("-n: '" + v + "' is not a whole number >= 1");
      }
    } else if (a == "--backend") {
      // Only `auto` is resolved against this machine: writing candidates runs no kernel, so
      // cuda tilings may be written here for a GPU machine.
      const std::string& b = backendOption(args, i);
      o.request.backend = b == "auto" ? resolveBackend(b) : b;
    } else if (a == "--out") {
      o.outDir = optionValue(args, i);
    } else if (a == "--json") {
      o.json = true;
    } else if (!a.empty() && a[0] == '-') {
      throw BadInput("unknown option " + a);
    } else {
      positional.push_back(a);
    }
  }
  if (positional.size() != 1) throw BadInput("expected one REFERENCE.py");
  o.request.referencePath = positional[0];
  return o;
}

void writeText(const std::filesystem::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f) throw std::runtime_error("cannot write " + path.string());
}

void writeOut(const std::string& dir, const kernel_synth::SynthResult& r) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  writeText(fs::path(dir) / "graph.json", r.graph.dump(2) + "\n");
  for (std::size_t k = 0; k < r.candidates.size(); ++k) {
    writeText(fs::path(dir) / ("candidate_" + std::to_string(k) + ".py"), r.candidates[k].code);
    writeText(fs::path(dir) / ("plan_" + std::to_string(k) + ".txt"),
              r.candidates[k].label + "\n\n" + r.candidates[k].plan);
  }
}
}  // namespace

int runSynth(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  SynthOptions o;
  if (auto code = parseCommandLine(args, "synth", kSynthUsage, parse, o, out, err)) return *code;
  watchForInterrupt();
  kernel_synth::SynthResult result;
  try {
    auto progress = [&](const std::string& m) {
      if (!o.json) err << "[synth] " << m << "\n";
    };
    result = kernel_synth::synthesize(o.request, interruptSource().get_token(), progress);
    if (!o.outDir.empty()) writeOut(o.outDir, result);
  } catch (const BadInput& e) {
    err << "crucible synth: " << e.what() << "\n";
    if (o.json) out << nlohmann::json{{"candidates", nullptr}, {"error", e.what()}}.dump(2) << "\n";
    return 2;
  } catch (const std::exception& e) {
    err << "crucible synth: error: " << e.what() << "\n";
    return 3;
  }
  if (o.json) {
    out << nlohmann::json(result).dump(2) << "\n";
  } else {
    for (const auto& u : result.unsupported) out << "cannot lower: " << u << "\n";
    for (std::size_t k = 0; k < result.candidates.size(); ++k) {
      out << "candidate " << k << " (" << result.candidates[k].label << ")\n"
          << result.candidates[k].plan;
    }
    if (!o.outDir.empty() && !result.candidates.empty()) {
      out << "written to " << o.outDir << "\n";
    }
  }
  return result.candidates.empty() ? 1 : 0;
}

}  // namespace crucible::cli
