// `crucible profile`: a candidate's launches in one forward call, each timed, counted and placed
// against the device's measured peaks (core/inspect/profile_run.h; docs/PROFILE.md).
#include <iostream>
#include <stop_token>

#include "app/crucible/cli_support.h"
#include "app/crucible/commands.h"
#include "app/crucible/interrupt.h"
#include "app/crucible/text_table.h"
#include "core/inspect/profile_run.h"

namespace crucible::cli {

namespace {
const std::string kProfileUsage =
    "usage: crucible profile CANDIDATE.py --reference REFERENCE.py [options]\n"
    "\n"
    "  Runs the candidate's forward call on the reference's inputs and reports every kernel\n"
    "  launch in order: its line, time (median of the timed calls), share of the call, bytes\n"
    "  and FLOPs (counted on Triton's interpreter), achieved GB/s and GFLOP/s and the fraction\n"
    "  of the roofline's roof above it, from the device's measured peaks.\n"
    "\n"
    "options:\n"
    "  --reference FILE           the PyTorch reference whose inputs the candidate runs on\n"
    "  --backend auto|interpret|cuda|opencl   where the kernels run (default auto)\n"
    "  --calls N                  timed forward calls (default 10)\n"
    "  --warmup N                 untimed calls before them (default 2)\n"
    "  --timeout SECONDS          wall-clock limit for each run of the candidate (default 300)\n"
    "  --count-cap SECONDS        longest a launch is counted on the interpreter (default 60);\n"
    "                             a launch that takes longer is reported as not counted\n"
    "  --threads N                CPU threads (default 1; 0: PyTorch's default)\n"
    "  --seed N                   seed for the weights (default 42)\n"
    "  --json                     print the profile as one JSON object\n"
    "\n"
    "exit codes: 0 profiled; 1 the candidate did not run (its file and line are printed);\n"
    "2 bad usage or bad reference; 3 error (timeout, crash, infrastructure)\n";

struct ProfileOptions {
  ProfileRequest request;
  bool json = false;
};

ProfileOptions parse(const std::vector<std::string>& args) {
  ProfileOptions o;
  std::vector<std::string> positional;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--reference") {
      o.request.referencePath = optionValue(args, i);
    } else if (a == "--backend") {
      o.request.backend = backendOption(args, i);
    } else if (a == "--calls") {
      o.request.calls = static_cast<int>(numberOption(args, i, 1));
    } else if (a == "--warmup") {
      o.request.warmup = static_cast<int>(numberOption(args, i, 0));
    } else if (a == "--timeout") {
      o.request.timeoutSeconds = numberOption(args, i, 1);
    } else if (a == "--count-cap") {
      o.request.countCapSeconds = numberOption(args, i, 0);
    } else if (a == "--threads") {
      o.request.threads = static_cast<int>(numberOption(args, i, 0));
    } else if (a == "--seed") {
      o.request.seed = static_cast<int>(numberOption(args, i, 0));
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

std::string orDash(const std::optional<double>& value, const char* format, double scale = 1) {
  return value ? formatNumber(format, *value * scale) : "-";
}

std::string lineText(const LaunchProfile& l) {
  std::string text = l.launchLine ? std::to_string(*l.launchLine) : "?";
  if (l.defLine) text += " (def " + std::to_string(*l.defLine) + ")";
  return text;
}

std::string gridText(const std::vector<std::int64_t>& grid) {
  std::string text;
  for (std::size_t i = 0; i < grid.size(); ++i) text += (i ? "x" : "") + std::to_string(grid[i]);
  return text.empty() ? "?" : text;
}

std::string roofText(const LaunchProfile& l) {
  if (l.roof) {
    return formatNumber("%.1f%%", l.roof->fraction * 100) +
           (l.roof->memoryBound ? " of memory" : " of compute");
  }
  return l.counted ? "-" : "not counted";
}

void printLaunches(std::ostream& out, const KernelProfile& p) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& l : p.launches) {
    const auto bytes = l.bytes();
    rows.push_back({std::to_string(l.index), l.kernel, lineText(l), gridText(l.grid),
                    l.time ? formatNumber("%.4f", l.time->medianMs) : "-",
                    orDash(l.share, "%.1f%%", 100), bytes ? std::to_string(*bytes) : "-",
                    l.flops ? std::to_string(*l.flops) : "-", orDash(l.achievedGBs, "%.2f"),
                    orDash(l.achievedGflops, "%.2f"), roofText(l)});
  }
  printTable(
      out,
      {"#", "kernel", "line", "grid", "ms", "share", "bytes", "FLOPs", "GB/s", "GFLOP/s", "roof"},
      rows, {true, false, false, false, true, true, true, true, true, true, true});
}

void printProfile(std::ostream& out, const KernelProfile& p) {
  const DevicePeaks& d = p.device;
  out << "candidate: " << p.candidate << "\n"
      << "device: " << d.name << " (" << d.backend << "): " << formatNumber("%.2f", d.bandwidthGBs)
      << " GB/s, " << formatNumber("%.1f", d.peakGflops) << " GFLOP/s measured\n"
      << "  " << d.method << "\n";
  if (p.error) {
    out << "error (" << p.error->stage << "): " << p.error->file
        << (p.error->line ? ":" + std::to_string(*p.error->line) : "") << ": " << p.error->message
        << "\n";
    return;
  }
  out << "timer: " << p.timer << "\n";
  if (p.forward) {
    out << "forward: " << formatNumber("%.4f", p.forward->medianMs) << " ms median of "
        << p.forward->samples << " calls (" << formatNumber("%.4f", p.forward->minMs) << " to "
        << formatNumber("%.4f", p.forward->maxMs) << "); launches "
        << orDash(p.launchesShare, "%.1f%%", 100) << " of it\n";
  }
  if (p.callsMatching < p.calls) {
    out << "note: " << p.calls - p.callsMatching
        << " timed calls launched other kernels than the first and are left out\n";
  }
  if (!p.countNote.empty()) out << "note: " << p.countNote << "\n";
  out << "\n";
  if (p.launches.empty()) {
    out << "no Triton launches in the forward call\n";
    return;
  }
  printLaunches(out, p);
  for (const auto& l : p.launches) {
    if (!l.counted && !l.notCountedReason.empty() && p.countNote.empty()) {
      out << "#" << l.index << " not counted: " << l.notCountedReason << "\n";
    }
  }
}

/// 1 when the candidate did not run, 3 when its run failed for want of time, memory or life.
int profileExitCode(const KernelProfile& p) {
  if (!p.error) return 0;
  const std::string& stage = p.error->stage;
  return stage == "load" || stage == "construct" || stage == "run" ? 1 : 3;
}
}  // namespace

int runProfile(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ProfileOptions options;
  if (auto exit = parseCommandLine(args, "profile", kProfileUsage, parse, options, out, err))
    return *exit;
  watchForInterrupt();
  KernelProfile profile;
  try {
    auto progress = [&](const ProfileProgress& p) {
      if (!options.json) err << "[" << p.stage << "] " << p.message << "\n";
    };
    profile = profileCandidate(options.request, progress, interruptSource().get_token());
  } catch (const BadInput& e) {
    err << "crucible profile: " << e.what() << "\n";
    if (options.json) {
      out << nlohmann::json{{"error", {{"stage", "usage"}, {"message", e.what()}}}}.dump(2) << "\n";
    }
    return 2;
  } catch (const std::exception& e) {
    err << "crucible profile: error: " << e.what() << "\n";
    if (options.json) {
      out << nlohmann::json{{"error", {{"stage", "infrastructure"}, {"message", e.what()}}}}.dump(2)
          << "\n";
    }
    return 3;
  }
  if (options.json) {
    out << nlohmann::json(profile).dump(2) << "\n";
  } else {
    printProfile(out, profile);
  }
  if (profile.error) {
    err << "crucible profile: " << profile.error->file
        << (profile.error->line ? ":" + std::to_string(*profile.error->line) : "") << ": "
        << profile.error->message << "\n";
  }
  return profileExitCode(profile);
}

}  // namespace crucible::cli
