// `crucible ir`: what actually runs for a candidate, kernel by kernel, each IR line beside the
// candidate's Python line it came from (core/inspect).
#include <algorithm>
#include <iomanip>
#include <iostream>

#include "app/crucible/cli_support.h"
#include "app/crucible/commands.h"
#include "app/crucible/interrupt.h"
#include "core/inspect/ir_run.h"

namespace crucible::cli {

namespace {
constexpr const char* kIrUsage =
    "usage: crucible ir CANDIDATE.py --reference REFERENCE.py [--backend B] [--level L]\n"
    "                   [--seed N] [--timeout S] [--json]\n"
    "\n"
    "  Calls the candidate once on the reference's inputs, in the worker's sandbox, and shows\n"
    "  what each kernel it launches compiles to, with the candidate's Python line beside each\n"
    "  line of IR.\n"
    "\n"
    "options:\n"
    "  --reference FILE  the PyTorch reference whose get_inputs() the candidate is called on\n"
    "  --backend B       auto | opencl | cuda | interpret (default auto, as `crucible verify`):\n"
    "                    opencl shows the OpenCL C crucible_tcl compiles; cuda shows Triton's\n"
    "                    ttir, ttgir, llir and ptx (without a GPU, compiled for sm_90);\n"
    "                    interpret compiles nothing\n"
    "  --level L         only this level: opencl_c, ttir, ttgir, llir or ptx\n"
    "  --seed N          the seed the model is built with (default 42)\n"
    "  --timeout S       seconds for the candidate's stage (default 300)\n"
    "  --json            print the report as one JSON object\n"
    "\n"
    "exit codes: 0 reported; 1 the candidate did not run (its error, with its line);\n"
    "2 bad usage, an unreadable file or a reference that does not run; 3 infrastructure error\n";

struct IrOptions {
  inspect::IrRequest request;
  std::string level;
  bool json = false;
};

IrOptions parse(const std::vector<std::string>& args) {
  IrOptions o;
  std::vector<std::string> positional;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--reference") {
      o.request.referencePath = optionValue(args, i);
    } else if (a == "--backend") {
      o.request.backend = backendOption(args, i);
    } else if (a == "--level") {
      o.level = optionValue(args, i);
      const auto& names = inspect::irLevelNames();
      if (std::find(names.begin(), names.end(), o.level) == names.end()) {
        throw BadInput("--level: expected opencl_c, ttir, ttgir, llir or ptx");
      }
    } else if (a == "--seed") {
      o.request.seed = static_cast<int>(numberOption(args, i, 0));
    } else if (a == "--timeout") {
      o.request.timeoutSeconds = numberOption(args, i, 1);
    } else if (a == "--json") {
      o.json = true;
    } else if (!a.empty() && a[0] == '-') {
      throw BadInput("unknown option " + a);
    } else {
      positional.push_back(a);
    }
  }
  if (positional.size() != 1) throw BadInput("expected one CANDIDATE.py");
  if (o.request.referencePath.empty()) throw BadInput("--reference REFERENCE.py is required");
  o.request.candidatePath = positional[0];
  return o;
}

/// Only the chosen level in every kernel (all when none is chosen).
void keepLevel(inspect::KernelIrReport& report, const std::string& level) {
  if (level.empty()) return;
  for (auto& k : report.kernels) {
    std::erase_if(k.levels, [&](const inspect::IrLevel& l) { return l.name != level; });
  }
}

std::string where(const inspect::IrError& e) {
  return e.file + (e.line ? ":" + std::to_string(*e.line) : "") + ": ";
}

void printLevel(const inspect::IrLevel& level, std::ostream& out) {
  out << "  -- " << level.name << "\n";
  if (level.error) out << "     (" << level.error->message << ")\n";
  const auto lines = inspect::splitIrLines(level.text);
  for (std::size_t n = 0; n < lines.size(); ++n) {
    const auto py = n < level.lineMap.size() ? level.lineMap[n] : std::nullopt;
    out << std::setw(6) << (py ? std::to_string(*py) : std::string()) << " | " << lines[n] << "\n";
  }
}

void printReport(const inspect::KernelIrReport& r, std::ostream& out) {
  out << r.candidateFile << " on " << r.backend;
  if (!r.target.empty()) out << " (" << r.target << ")";
  out << "\n";
  if (!r.note.empty()) out << r.note << "\n";
  if (r.compiled && r.kernels.empty() && !r.error) out << "no kernel was launched\n";
  for (const auto& k : r.kernels) {
    out << "\nkernel " << k.name;
    if (k.defLine) out << " (def at line " << *k.defLine << ")";
    if (!k.specialization.empty()) out << " [" << k.specialization << "]";
    out << "\n";
    if (k.error) out << "  could not compile: " << where(*k.error) << k.error->message << "\n";
    for (const auto& l : k.levels) printLevel(l, out);
  }
}
}  // namespace

int runIr(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  IrOptions o;
  if (auto code = parseCommandLine(args, "ir", kIrUsage, parse, o, out, err)) return *code;
  watchForInterrupt();
  inspect::KernelIrReport report;
  try {
    report = inspect::inspectKernels(o.request, interruptSource().get_token());
  } catch (const BadInput& e) {
    err << "crucible ir: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    err << "crucible ir: error: " << e.what() << "\n";
    return 3;
  }
  keepLevel(report, o.level);
  if (o.json) {
    out << inspect::toJson(report).dump(2) << "\n";
  } else {
    printReport(report, out);
  }
  if (report.error) {
    err << "crucible ir: " << where(*report.error) << report.error->message << "\n";
    return 1;
  }
  return 0;
}

}  // namespace crucible::cli
