// `crucible tasks synth` (DRTriton's CSP-DAG task synthesis, core/task_synth) and
// `crucible tasks list` (a task folder's index.json: the bundled corpus by default).
// Exit codes: 0 done; 1 the synthesis gave up (too many rejected candidates); 2 bad usage or
// unreadable index; 3 the worker failed; 130 interrupted (what was accepted is written).

#include <charconv>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/crucible/commands.h"
#include "app/crucible/interrupt.h"
#include "core/util/locations.h"

#ifdef CRUCIBLE_HAVE_TASKSYNTH
#include "core/task_synth/op_catalogue.h"
#include "core/task_synth/synthesizer.h"
#endif

namespace crucible::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kUsage =
    "usage: crucible tasks synth --ops N --count K --out DIR [--seed S] [options]\n"
    "       crucible tasks list [--dir DIR] [--json]\n"
    "       crucible tasks export OUT --format verl [--dir DIR] [--levels L] [options]\n"
    "\n"
    "  synth     sample K programs of N PyTorch operators each as DAGs, solve their shapes as a\n"
    "            constraint problem (Gecode), run each one and keep those whose outputs are\n"
    "            finite and not degenerate; writes KernelBench-format files and index.json\n"
    "  list      the tasks of a folder's index.json (default: the bundled corpus)\n"
    "  export    a task folder as verl's RL dataset: OUT/train.parquet and OUT/test.parquet\n"
    "            (prompt messages, the reference as ground truth, level and operators in\n"
    "            extra_info; fewer operators first, a curriculum), docs/RL.md\n"
    "\n"
    "synth options:\n"
    "  --ops N                  compute operators per program, the difficulty (1..200)\n"
    "  --count K                tasks to write\n"
    "  --seed S                 the run's seed (default 0); one seed gives the same files\n"
    "  --out DIR                output folder, empty or new unless --force\n"
    "  --force                  write into a non-empty folder\n"
    "  --no-check               do not run the tasks (NaN/Inf and degenerate ones stay)\n"
    "  --max-dim N              every dim in [1, N] (default 1024)\n"
    "  --max-flops N            estimated FLOPs of a program, at most (default 268435456)\n"
    "  --min-flops N            ... at least (default 16384)\n"
    "  --max-bytes N            bytes of all tensors and parameters (default 67108864)\n"
    "  --min-output-elements N  elements of each program output (default 16)\n"
    "  --fail-limit N           solver failures before a candidate is given up (default 5000)\n"
    "  --max-candidates N       give up after N candidates (default 50 per task + 100)\n"
    "  --json                   print one JSON report instead of text\n"
    "\n"
    "export options:\n"
    "  --dir DIR                a task folder: the bundled corpus (default) or a tasks synth "
    "output\n"
    "  --levels L               only these levels (\"1,2\")\n"
    "  --template NAME          the prompt template (default kernelbench)\n"
    "  --backend B              the backend the prompt names (default cuda)\n"
    "  --data-source NAME       verl's data_source (default crucible)\n"
    "  --test-fraction F        the share of tasks in test.parquet (default 0.1)\n"
    "\n"
    "list options:\n"
    "  --dir DIR                a folder with index.json (default: the bundled resources/tasks)\n"
    "  --json                   print the index as JSON\n";

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

long long parseCount(const std::string& option, const std::string& text, long long min) {
  long long value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < min) {
    throw UsageError(option + " needs a whole number >= " + std::to_string(min) + ", not '" + text +
                     "'");
  }
  return value;
}

/// The bundled corpus: next to the build tree's binary (bin/../../resources/tasks) or in an
/// installed prefix (bin/../share/crucible/resources/tasks, where the workbench finds it too).
fs::path bundledTasks() {
  const fs::path bin = executableDir();
  for (const fs::path& candidate : {bin / ".." / ".." / "resources" / "tasks",
                                    bin / ".." / "share" / "crucible" / "resources" / "tasks"}) {
    std::error_code ec;
    if (fs::exists(candidate / "index.json", ec)) return fs::weakly_canonical(candidate);
  }
  return {};
}

int runList(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  fs::path dir;
  bool asJson = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--json") {
      asJson = true;
    } else if (args[i] == "--dir" && i + 1 < args.size()) {
      dir = args[++i];
    } else {
      throw UsageError("unknown option '" + args[i] + "' for tasks list");
    }
  }
  if (dir.empty()) dir = bundledTasks();
  if (dir.empty()) {
    err << "crucible tasks list: the bundled corpus was not found; pass --dir DIR\n";
    return 2;
  }
  const fs::path indexPath = dir / "index.json";
  std::ifstream in(indexPath);
  json index;
  try {
    if (!in) throw std::runtime_error("cannot be read");
    index = json::parse(in);
    if (!index.is_array()) throw std::runtime_error("is not a JSON array");
  } catch (const std::exception& e) {
    err << "crucible tasks list: " << indexPath.string() << ": " << e.what() << "\n";
    return 2;
  }
  if (asJson) {
    out << index.dump(2) << "\n";
    return 0;
  }
  for (const auto& entry : index) {
    const json level = entry.value("level", json());
    std::string ops;
    for (const auto& op : entry.value("ops", json::array())) {
      ops += (ops.empty() ? "" : ", ") + op.get<std::string>();
    }
    out << std::left << std::setw(6)
        << (level.is_string() ? level.get<std::string>() : level.dump()) << std::setw(46)
        << entry.value("file", std::string()) << ops << "\n";
  }
  out << index.size() << " tasks in " << dir.string() << "\n";
  return 0;
}

#ifdef CRUCIBLE_HAVE_TASKSYNTH

task_synth::SynthOptions parseSynth(const std::vector<std::string>& args, bool& asJson) {
  task_synth::SynthOptions o;
  bool haveOps = false, haveCount = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") {
      asJson = true;
      continue;
    }
    if (a == "--force") {
      o.overwrite = true;
      continue;
    }
    if (a == "--no-check") {
      o.runCheck = false;
      continue;
    }
    if (a.rfind("--", 0) != 0) throw UsageError("unexpected argument '" + a + "'");
    if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
    const std::string& v = args[++i];
    if (a == "--ops") {
      o.computeNodes = static_cast<int>(parseCount(a, v, 1));
      haveOps = true;
    } else if (a == "--count") {
      o.count = static_cast<int>(parseCount(a, v, 1));
      haveCount = true;
    } else if (a == "--seed") {
      o.seed = static_cast<std::uint64_t>(parseCount(a, v, 0));
    } else if (a == "--out") {
      o.outDir = v;
    } else if (a == "--max-dim") {
      o.bounds.maxDim = static_cast<int>(std::min(parseCount(a, v, 1), 1LL << 30));
    } else if (a == "--max-flops") {
      o.bounds.maxFlops = parseCount(a, v, 1);
    } else if (a == "--min-flops") {
      o.bounds.minFlops = parseCount(a, v, 0);
    } else if (a == "--max-bytes") {
      o.bounds.maxBytes = parseCount(a, v, 1);
    } else if (a == "--min-output-elements") {
      o.bounds.minOutputElements = parseCount(a, v, 1);
    } else if (a == "--fail-limit") {
      o.bounds.failLimit = static_cast<std::uint64_t>(parseCount(a, v, 1));
    } else if (a == "--max-candidates") {
      o.maxCandidates = static_cast<std::uint64_t>(parseCount(a, v, 1));
    } else {
      throw UsageError("unknown option '" + a + "' for tasks synth");
    }
  }
  if (!haveOps) throw UsageError("tasks synth needs --ops N");
  if (!haveCount) throw UsageError("tasks synth needs --count K");
  if (o.outDir.empty()) throw UsageError("tasks synth needs --out DIR");
  return o;
}

/// Items joined by `separator`, in lines of at most 96 characters indented by two.
void printWrapped(std::ostream& out, const std::vector<std::string>& items,
                  const std::string& separator) {
  std::string line;
  for (const auto& item : items) {
    if (!line.empty() && line.size() + separator.size() + item.size() > 94) {
      out << "  " << line << "\n";
      line.clear();
    }
    line += (line.empty() ? "" : separator) + item;
  }
  if (!line.empty()) out << "  " << line << "\n";
}

void printReport(const task_synth::SynthReport& r, const task_synth::SynthOptions& o,
                 std::ostream& out) {
  out << "wrote " << r.tasks.size() << " of " << o.count << " tasks to " << o.outDir.string()
      << " (index.json)" << (r.cancelled ? ", interrupted" : "") << "\n";
  out << "candidates: " << r.candidates << "; rejected:";
  for (const auto& [kind, n] : r.rejected) out << " " << kind << " " << n;
  out << "\n"
      << std::fixed << std::setprecision(2) << "time: " << r.seconds << " s ("
      << (r.seconds > 0 ? static_cast<double>(r.tasks.size()) / r.seconds : 0.0)
      << " tasks/s; solving " << r.solveSeconds << " s, run check " << r.checkSeconds << " s)\n";
  const auto ops = task_synth::catalogue();
  out << "coverage: " << ops.size() - r.unused.size() << " of " << ops.size()
      << " operators used\n";
  std::vector<std::string> items;
  for (const auto& op : ops) {
    items.push_back(std::string(op.name) + " " +
                    std::to_string(r.coverage.at(std::string(op.name))));
  }
  printWrapped(out, items, ", ");
  out << "never used:" << (r.unused.empty() ? " none" : "") << "\n";
  printWrapped(out, r.unused, " ");
}

int runTaskSynth(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  bool asJson = false;
  const auto options = parseSynth(args, asJson);
  watchForInterrupt();
  const auto progress = [&err](const task_synth::SynthProgress& p) {
    err << "synth: " << p.accepted << "/" << p.target << " tasks, " << p.candidates
        << " candidates, " << p.rejected << " rejected\n";
  };
  task_synth::SynthReport report;
  try {
    report = task_synth::synthesize(options, progress, interruptSource().get_token());
  } catch (const std::invalid_argument& e) {
    err << "crucible tasks synth: " << e.what() << "\n";
    return 2;
  } catch (const task_synth::CheckInfrastructureError& e) {
    err << "crucible tasks synth: " << e.what() << "\n";
    return 3;
  } catch (const std::exception& e) {
    err << "crucible tasks synth: " << e.what() << "\n";
    return 1;
  }
  if (asJson) {
    out << report.toJson().dump(2) << "\n";
  } else {
    printReport(report, options, out);
  }
  if (report.cancelled) {
    err << "crucible tasks synth: interrupted; " << report.tasks.size()
        << " tasks written with their index\n";
    return 130;
  }
  return 0;
}

#else

int runTaskSynth(const std::vector<std::string>&, std::ostream&, std::ostream& err) {
  err << "crucible tasks synth: this build has no task synthesizer (it needs Gecode: "
         "apt install libgecode-dev, then rebuild)\n";
  return 2;
}

#endif

}  // namespace

int runTasks(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    (args.empty() ? err : out) << kUsage;
    return args.empty() ? 2 : 0;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  try {
    for (const auto& a : rest) {
      if (a == "--help" || a == "-h") {
        out << kUsage;
        return 0;
      }
    }
    if (args[0] == "synth") return runTaskSynth(rest, out, err);
    if (args[0] == "list") return runList(rest, out, err);
    if (args[0] == "export") return runTasksExport(rest, bundledTasks(), out, err);
    throw UsageError("unknown action '" + args[0] + "' (synth, list or export)");
  } catch (const UsageError& e) {
    err << "crucible tasks: " << e.what() << "\n" << kUsage;
    return 2;
  }
}

}  // namespace crucible::cli
