// `crucible bench DIR`: every task of a folder through the generation pipeline (core/bench), the
// KernelBench metrics, and a report folder (bench.json, eval_results.json, report.md, plots) that
// a rerun resumes. `crucible bench --compare FILE` reads a published eval_results.json and prints
// the same metrics.
// Exit codes: 0 the run finished (whatever the kernels did); 2 bad usage, folder or file; 3 an
// error of the run itself (the database, the report folder); 130 interrupted (what finished is
// kept and a rerun with the same --report resumes it).

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "app/crucible/cli_support.h"
#include "app/crucible/commands.h"
#include "app/crucible/interrupt.h"
#include "app/crucible/text_table.h"
#include "core/bench/eval_results.h"
#include "core/bench/report.h"
#include "core/bench/report_folder.h"
#include "core/bench/runner.h"
#include "core/bench/shrink.h"
#include "core/generate/generator_factory.h"
#include "core/serve/cluster_verifier.h"
#include "core/serve/lanes.h"
#include "core/store/store.h"
#include "core/util/atomic_file.h"
#include "core/util/locations.h"

#ifdef CRUCIBLE_HAVE_PLOTS
#include "ui/plot/bench_plots.h"
#endif

namespace crucible::cli {

namespace {

namespace fs = std::filesystem;
using bench::BenchEvent;
using bench::TaskResult;
using nlohmann::json;

const std::string kBenchUsage =
    std::string(
        "usage: crucible bench DIR [options]\n"
        "       crucible bench --compare EVAL_RESULTS.json [--baseline FILE] [--level L] [--json]\n"
        "\n"
        "  Generates and verifies a kernel for every task of DIR (the bundled resources/tasks, a\n"
        "  `tasks synth` output, a KernelBench level folder or any folder of .py references) and\n"
        "  reports KernelBench's metrics: correctness, fast_p, geometric-mean speedup, pass@k.\n"
        "  --compare reads a published eval_results.json and prints the same metrics.\n"
        "\n"
        "tasks:\n"
        "  --levels L                 only these levels (\"1,2\")\n"
        "  --limit N                  only the first N tasks\n"
        "  --shrink F                 scale the tasks' size constants by F in (0, 1] so GPU-sized\n"
        "                             tasks run on a CPU; every output is marked as shrunk\n"
        "  --scale F                  the same upwards, F in [1, 16]: CPU-sized tasks (the\n"
        "                             bundled corpus) grown to sizes a GPU notices; marked too\n"
        "\n"
        "model:\n"
        "  --model synth|URL|PATH     as crucible generate (default synth)\n"
        "  --endpoint-model NAME  --prompt FILE  --temperature T  --max-tokens M\n"
        "  --samples K                candidates per task (default 1); the fastest verified is "
        "the\n"
        "                             task's result, and pass@k is reported for k <= K\n"
        "  --jobs J                   tasks at a time (default 1); each runs its own worker\n"
        "                             processes; on cuda their timings take turns (the\n"
        "                             device lock), on the CPU J > 1 makes timings noisier\n"
        "  --cluster ADDRESS          verify on J lanes that are Ray actors of that cluster\n"
        "                             (crucible serve --ray's lanes; cuda lanes ask for a GPU)\n"
        "\n"
        "verification (as crucible verify):\n") +
    kVerifyOptionsHelp +
    "\n"
    "output:\n"
    "  --report OUT               write OUT/report.md, OUT/bench.json, OUT/eval_results.json\n"
    "                             (KernelBench's layout; one per level in OUT/levelN/ when there\n"
    "                             are several), PNG plots; a rerun with the same OUT skips the\n"
    "                             tasks already finished there\n"
    "  --fresh                    with --report: redo every task\n"
    "  --db FILE                  database to store the sessions in (default: the user's)\n"
    "  --no-db                    do not store anything\n"
    "  --json                     print one JSON object (tasks, correct_rate, fast_p, ...)\n"
    "\n"
    "compare:\n"
    "  --compare FILE             a KernelBench eval_results.json\n"
    "  --baseline FILE            KernelBench baseline times (results/timing/HW/NAME.json), for\n"
    "                             files without ref_runtime\n"
    "  --level L                  the level of FILE in the baseline file (default 1)\n"
    "\n"
    "exit codes: 0 finished; 2 bad usage or input; 3 the run failed; 130 interrupted\n";

struct BenchOptions {
  bench::BenchOptions run;
  generate::GeneratorOptions generator;
  std::string dir;
  std::vector<std::string> levels;
  std::optional<std::size_t> limit;
  std::string report;
  bool fresh = false;
  std::string db;
  bool store = true;
  std::string cluster;  // a Ray cluster's address: verify on lanes there
  bool json = false;
  std::string compare, baseline, compareLevel = "1";
};

BenchOptions parse(const std::vector<std::string>& args) {
  BenchOptions o;
  o.run.request.n = 1;
  std::vector<std::string> positional;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (parseVerifyOption(args, i, o.run.request.verify)) continue;
    if (a == "--model") {
      o.generator.model = optionValue(args, i);
    } else if (a == "--endpoint-model") {
      o.generator.endpointModel = optionValue(args, i);
    } else if (a == "--prompt") {
      o.generator.promptFile = optionValue(args, i);
    } else if (a == "--temperature") {
      o.run.request.generate.temperature = numberOption(args, i, 0);
    } else if (a == "--max-tokens") {
      o.run.request.generate.maxTokens = static_cast<int>(numberOption(args, i, 1));
    } else if (a == "--samples") {
      o.run.request.n = static_cast<int>(numberOption(args, i, 1));
    } else if (a == "--jobs") {
      o.run.jobs = static_cast<int>(numberOption(args, i, 1));
    } else if (a == "--cluster") {
      o.cluster = optionValue(args, i);
    } else if (a == "--levels") {
      o.levels = bench::parseLevels(optionValue(args, i));
      if (o.levels.empty()) throw BadInput("--levels needs at least one level");
    } else if (a == "--limit") {
      o.limit = static_cast<std::size_t>(numberOption(args, i, 1));
    } else if (a == "--shrink") {
      const double f = numberOption(args, i, 0);
      if (!(f > 0 && f <= 1)) throw BadInput("--shrink needs a factor in (0, 1]");
      o.run.shrink = f;
    } else if (a == "--scale") {
      const double f = numberOption(args, i, 0);
      if (!(f >= 1 && f <= bench::kMaxScale)) {
        throw BadInput("--scale needs a factor in [1, " + formatNumber("%g", bench::kMaxScale) +
                       "] (--shrink makes tasks smaller)");
      }
      o.run.shrink = f;
    } else if (a == "--report") {
      o.report = optionValue(args, i);
    } else if (a == "--fresh") {
      o.fresh = true;
    } else if (a == "--db") {
      o.db = optionValue(args, i);
    } else if (a == "--no-db") {
      o.store = false;
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--compare") {
      o.compare = optionValue(args, i);
    } else if (a == "--baseline") {
      o.baseline = optionValue(args, i);
    } else if (a == "--level") {
      const auto levels = bench::parseLevels(optionValue(args, i));
      if (levels.size() != 1) throw BadInput("--level takes one level");
      o.compareLevel = levels[0];
    } else if (!a.empty() && a[0] == '-') {
      throw BadInput("unknown option " + a);
    } else {
      positional.push_back(a);
    }
  }
  if (!o.compare.empty()) {
    if (!positional.empty()) throw BadInput("--compare takes no task folder");
    return o;
  }
  if (positional.size() != 1) throw BadInput("expected one task folder DIR");
  if (o.fresh && o.report.empty()) throw BadInput("--fresh is for --report");
  o.dir = positional[0];
  return o;
}

std::string duration(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  char text[32];
  if (s < 60) {
    std::snprintf(text, sizeof text, "%lds", s);
  } else if (s < 3600) {
    std::snprintf(text, sizeof text, "%ldm%02lds", s / 60, s % 60);
  } else {
    std::snprintf(text, sizeof text, "%ldh%02ldm", s / 3600, s / 60 % 60);
  }
  return text;
}

std::string outcome(const TaskResult& t) {
  const bench::SampleResult* k = t.kept();
  if (!k) return "no kernel (" + t.error + ")";
  return k->verdict + ", " + speedupText(k->speedup()) + ", " + std::to_string(t.correctSamples()) +
         "/" + std::to_string(t.samples.size()) + " samples verified";
}

void printEvent(std::ostream& err, const BenchEvent& e) {
  const std::string counter = "[" +
                              pad(std::to_string(e.done), std::to_string(e.total).size(), true) +
                              "/" + std::to_string(e.total) + "] ";
  switch (e.kind) {
    case BenchEvent::Kind::Started:
      err << "[start] " << e.task->id << "\n";
      break;
    case BenchEvent::Kind::Skipped:
      err << counter << e.task->id << ": resumed, already finished (" << outcome(*e.result)
          << ")\n";
      break;
    case BenchEvent::Kind::Finished:
      err << counter << e.task->id << ": " << outcome(*e.result) << " in "
          << duration(e.result->seconds) << "; elapsed " << duration(e.elapsed)
          << (e.etaSeconds ? ", ETA " + duration(*e.etaSeconds) : std::string()) << "\n";
      break;
  }
  err.flush();
}

std::string utcNow() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

/// Host, CPU and the devices the kernels ran on, for the report.
std::string machineDescription(const std::vector<TaskResult>& tasks) {
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  std::string cpu;
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);) {
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  }
  std::string devices;
  for (const auto& t : tasks) {
    if (!t.device.empty() && devices.find(t.device) == std::string::npos) {
      devices += (devices.empty() ? "" : "; ") + t.device;
    }
  }
  return std::string(host) + ", " + (cpu.empty() ? "unknown CPU" : cpu) + ", " +
         std::to_string(std::thread::hardware_concurrency()) + " threads" +
         (devices.empty() ? "" : "; kernels on " + devices);
}

std::string dumpJson(const json& j) {
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

/// The plots; the note says why there are none.
std::vector<std::string> writePlots(const fs::path& out, const bench::BenchReport& report,
                                    std::string& note) {
  std::vector<std::string> files;
#ifdef CRUCIBLE_HAVE_PLOTS
  const std::string suffix =
      report.settings.shrink ? " (" + bench::scaleWord(*report.settings.shrink) + " tasks)" : "";
  const auto bins = bench::speedupHistogram(bench::correctSpeedups(report.tasks));
  std::string error =
      plot::writeSpeedupHistogram(bins, "Speedup of correct kernels over eager PyTorch" + suffix,
                                  (out / "speedup_distribution.png").string());
  if (error.empty()) files.push_back("speedup_distribution.png");
  std::vector<plot::Curve> curves = {
      {"vs eager", bench::fastPCurve(report.tasks, bench::Baseline::Eager, 4.0, 81)}};
  if (report.metrics.fastPVsCompile) {
    curves.push_back(
        {"vs torch.compile", bench::fastPCurve(report.tasks, bench::Baseline::Compile, 4.0, 81)});
  }
  const std::string curveError =
      plot::writeFastPCurve(curves, "fast_p" + suffix, (out / "fast_p_curve.png").string());
  if (curveError.empty()) files.push_back("fast_p_curve.png");
  note = error.empty() ? curveError : error;
#else
  (void)out;
  (void)report;
  note = "plots skipped: this crucible was built without Qt (static CLI)";
#endif
  return files;
}

/// report.md, bench.json, eval_results.json (per level when several) and the plots.
void writeReport(const fs::path& out, const bench::BenchReport& report, std::ostream& err) {
  writeFileAtomically(out / "bench.json", dumpJson(bench::toJson(report)));
  const auto levels = bench::byLevel(report.tasks);
  const bool shrunk = report.settings.shrink.has_value();
  if (levels.size() <= 1) {
    writeFileAtomically(out / "eval_results.json",
                        dumpJson(bench::toEvalResults(report.tasks, shrunk)));
  } else {
    for (const auto& [level, tasks] : levels) {
      const fs::path dir = out / ("level" + (level.empty() ? std::string("_none") : level));
      fs::create_directories(dir);
      writeFileAtomically(dir / "eval_results.json", dumpJson(bench::toEvalResults(tasks, shrunk)));
    }
  }
  std::string note;
  const auto plots = writePlots(out, report, note);
  if (!note.empty()) err << "crucible bench: " << note << "\n";
  writeFileAtomically(out / "report.md", bench::markdownReport(report, plots, note));
}

void printSummary(std::ostream& out, const std::vector<TaskResult>& tasks, const bench::Metrics& m,
                  const std::optional<double>& scale) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& t : tasks) {
    const bench::SampleResult* k = t.kept();
    rows.push_back({t.id, k ? k->verdict : "-", speedupText(k ? k->speedup() : std::nullopt),
                    speedupText(k ? k->speedupVsCompile() : std::nullopt),
                    std::to_string(t.correctSamples()) + "/" + std::to_string(t.samples.size()),
                    t.error.empty() ? (k ? k->error : "") : t.error});
  }
  printTable(out, {"TASK", "VERDICT", "SPEEDUP", "VS COMPILE", "SAMPLES", "NOTE"}, rows,
             {false, false, true, true, true, false});
  out << "\n"
      << (scale ? "RESCALED tasks (size constants " + bench::scaleWord(*scale) + " by " +
                      formatNumber("%g", *scale) + "): speedups are those of the new sizes\n"
                : "")
      << "tasks " << m.tasks << ", correct " << m.correct << " ("
      << formatNumber("%.1f", 100 * m.correctRate) << "%), geometric-mean speedup "
      << speedupText(m.geomeanSpeedup) << "\n";
  std::string fast = "fast_p:", compile = "vs torch.compile:";
  for (const auto& [p, v] : m.fastP) fast += " " + p + "=" + formatNumber("%.3f", v);
  out << fast << "\n";
  if (m.fastPVsCompile) {
    for (const auto& [p, v] : *m.fastPVsCompile) compile += " " + p + "=" + formatNumber("%.3f", v);
    out << compile << "\n";
  } else {
    out << "fast_p vs torch.compile: not measured\n";
  }
  std::string pass = "pass@k:";
  for (const auto& [k, v] : m.passAtK) pass += " " + k + "=" + formatNumber("%.3f", v);
  out << pass << "\n";
}

int runCompare(const BenchOptions& o, std::ostream& out, std::ostream& err) {
  try {
    auto readJson = [](const std::string& path) {
      std::ifstream in(path);
      if (!in) throw bench::EvalResultsError(path + ": cannot read the file");
      try {
        return json::parse(in);
      } catch (const json::exception& e) {
        throw bench::EvalResultsError(path + ": not JSON: " + e.what());
      }
    };
    const json results = readJson(o.compare);
    const json baseline = o.baseline.empty() ? json(nullptr) : readJson(o.baseline);
    const auto tasks = bench::fromEvalResults(results, baseline, o.compareLevel);
    int samples = 1;
    for (const auto& t : tasks)
      samples = std::max<int>(samples, static_cast<int>(t.samples.size()));
    const bench::Metrics m = bench::computeMetrics(tasks, samples);
    if (o.json) {
      json j = m;
      j["tasks"] = tasks;
      j["source"] = o.compare;
      j["shrunk"] = false;
      out << dumpJson(j);
    } else {
      printSummary(out, tasks, m, std::nullopt);
    }
    return 0;
  } catch (const bench::EvalResultsError& e) {
    err << "crucible bench: " << o.compare << ": " << e.what() << "\n";
    return 2;
  }
}

}  // namespace

namespace {

/// What a run works through: its tasks, its settings and the generator made to check --model.
struct BenchPlan {
  std::vector<bench::BenchTask> tasks;
  bench::RunSettings settings;
  std::unique_ptr<generate::Generator> probe;
};

/// The tasks and settings from the options; an exit code (with the message written) on bad
/// input.
std::optional<int> planBench(BenchOptions& o, BenchPlan& plan, std::ostream& err) {
  try {
    plan.tasks = bench::listTasks(o.dir, o.levels);
    if (o.limit && plan.tasks.size() > *o.limit) plan.tasks.resize(*o.limit);
    plan.probe = generate::makeGenerator(o.generator);  // a bad --model fails before anything runs
    auto& verify = o.run.request.verify;
    // The cluster's lanes run the backend; this machine need not have its device.
    if (o.cluster.empty()) {
      verify.backend = resolveBackend(verify.backend);
    } else if (verify.backend == "auto") {
      verify.backend = openclDriverRegistered() ? "opencl" : "interpret";
    }
    o.run.request.generate.backend = verify.backend;
    if (o.store)
      o.run.request.databasePath = o.db.empty() ? store::Store::defaultDatabasePath() : o.db;
    plan.settings = {o.dir,           o.levels,      o.generator.model, verify.backend,
                     o.run.request.n, verify.trials, verify.seed,       verify.compileBaseline,
                     o.run.shrink};
    return std::nullopt;
  } catch (const bench::TaskSetError& e) {
    err << "crucible bench: " << e.what() << "\n";
    return 2;
  } catch (const BadInput& e) {
    err << "crucible bench: " << e.what() << "\n";
    return 2;
  } catch (const generate::GeneratorUnavailable& e) {
    err << "crucible bench: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    err << "crucible bench: " << e.what() << "\n";
    return 3;
  }
}

/// The report folder, resuming an earlier run with the same settings (what it reuses is said on
/// `err`); without one, a temporary folder for shrunk tasks. An exit code on failure.
std::optional<int> openReport(BenchOptions& o, const bench::RunSettings& settings,
                              std::optional<bench::ReportFolder>& folder,
                              std::optional<fs::path>& tempShrunk, std::ostream& err) {
  try {
    if (!o.report.empty()) {
      folder.emplace(o.report, settings, o.fresh);
      if (folder->unreadableLines() > 0) {
        err << "crucible bench: " << folder->resultsFile().string() << ": "
            << folder->unreadableLines() << " unreadable line(s) ignored\n";
      }
      const auto& finished = folder->finished();
      if (!finished.empty()) {
        const long reused = folder->resumable();
        err << "resuming: " << reused << " task(s) already finished in "
            << folder->resultsFile().string() << " are not run again (--fresh to redo them)";
        if (reused < static_cast<long>(finished.size())) {
          err << "; " << finished.size() - reused << " without a kernel run again";
        }
        err << "\n";
      }
      o.run.shrunkDir = folder->shrunkDir().string();
    } else if (o.run.shrink) {
      tempShrunk = fs::temp_directory_path() / ("crucible-bench-" + std::to_string(::getpid()));
      o.run.shrunkDir = tempShrunk->string();
    }
    return std::nullopt;
  } catch (const bench::ReportFolderMismatch& e) {
    err << "crucible bench: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    err << "crucible bench: " << o.report << ": " << e.what() << "\n";
    return 3;
  }
}

/// The report (files, JSON or the summary) of a run that ended; the exit code.
int finishBench(const BenchOptions& o, const BenchPlan& plan, bench::BenchRun run,
                std::ostream& out, std::ostream& err) {
  bench::BenchReport report;
  report.settings = plan.settings;
  report.tasks = std::move(run.tasks);
  report.metrics = bench::computeMetrics(report.tasks, o.run.request.n);
  report.tasksPlanned = static_cast<int>(plan.tasks.size());
  report.resumed = run.skipped;
  report.interrupted = run.interrupted;
  if (o.run.request.databasePath) report.database = *o.run.request.databasePath;
  report.machine = machineDescription(report.tasks);
  report.date = utcNow();

  if (!o.report.empty()) {
    try {
      writeReport(o.report, report, err);
      err << "report written to " << o.report << "\n";
    } catch (const std::exception& e) {
      err << "crucible bench: the report was NOT written: " << e.what() << "\n";
      return 3;
    }
  }
  if (o.json) {
    out << dumpJson(bench::toJson(report));
  } else {
    printSummary(out, report.tasks, report.metrics, plan.settings.shrink);
  }
  if (run.interrupted) {
    err << "crucible bench: interrupted; " << report.tasks.size() << " of " << plan.tasks.size()
        << " tasks finished" << (o.report.empty() ? "" : "; rerun with the same --report to resume")
        << "\n";
    return 130;
  }
  return 0;
}

}  // namespace

/// With --cluster: an in-process service whose lanes (one per job) are Ray actors of the
/// cluster, and the pipeline's verifier set to it. An exit code on failure.
std::optional<int> openCluster(BenchOptions& o, std::shared_ptr<serve::ClusterVerifier>& cluster,
                               std::ostream& err) {
  if (o.cluster.empty()) return std::nullopt;
  const serve::RayTools ray = serve::locateRayTools();
  if (!ray.problem.empty()) {
    err << "crucible bench: --cluster: " << ray.problem << "\n";
    return 2;
  }
  serve::ServiceOptions service;
  const std::string backend = o.run.request.verify.backend;
  for (int k = 0; k < o.run.jobs; ++k) {
    service.lanes.push_back(
        backend == "cuda"
            ? serve::LaneSpec{"cuda:" + std::to_string(k), "cuda", k}
            : serve::LaneSpec{k == 0 ? "cpu" : "cpu:" + std::to_string(k), backend, std::nullopt});
  }
  service.db =
      (fs::path(temporaryRoot()) / ("crucible-cluster-" + std::to_string(::getpid()) + ".db"))
          .string();
  service.laneProgram = (fs::path(executableDir()) / "crucible").string();
  service.rayAddress = o.cluster;
  service.rayPython = ray.python;
  service.rayBridge = ray.bridge;
  cluster = std::make_shared<serve::ClusterVerifier>(service);
  o.run.request.verifier = [cluster](const VerifyRequest& r, std::stop_token stop) {
    return cluster->verify(r, stop);
  };
  err << "crucible bench: verifying on " << o.run.jobs << " Ray lane(s) of " << o.cluster << "\n";
  return std::nullopt;
}

int runBench(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  BenchOptions o;
  if (auto exit = parseCommandLine(args, "bench", kBenchUsage, parse, o, out, err)) return *exit;
  if (!o.compare.empty()) return runCompare(o, out, err);

  BenchPlan plan;
  if (auto exit = planBench(o, plan, err)) return *exit;
  std::optional<bench::ReportFolder> folder;
  std::optional<fs::path> tempShrunk;
  if (auto exit = openReport(o, plan.settings, folder, tempShrunk, err)) return *exit;

  err << "crucible bench: " << plan.tasks.size() << " task(s) from " << o.dir << ", model "
      << o.generator.model << ", backend " << plan.settings.backend << ", " << o.run.request.n
      << " sample(s) each, " << o.run.jobs << " at a time"
      << (o.run.shrink ? ", size constants " + bench::scaleWord(*o.run.shrink) + " by " +
                             formatNumber("%g", *o.run.shrink)
                       : "")
      << "\n";

  std::shared_ptr<serve::ClusterVerifier> cluster;
  if (auto exit = openCluster(o, cluster, err)) return *exit;
  watchForInterrupt();
  std::mutex probeLock;
  std::string appendError;  // onEvent runs one call at a time
  bench::BenchRun run;
  const bench::GeneratorFactory factory = [&]() -> std::unique_ptr<generate::Generator> {
    {
      std::lock_guard lock(probeLock);
      if (plan.probe) return std::move(plan.probe);
    }
    return generate::makeGenerator(o.generator);
  };
  const std::map<std::string, TaskResult> none;
  try {
    run = bench::runBench(plan.tasks, o.run, factory, folder ? folder->finished() : none,
                          interruptSource().get_token(), [&](const BenchEvent& e) {
                            printEvent(err, e);
                            if (e.kind != BenchEvent::Kind::Finished || !folder) return;
                            if (!folder->append(*e.result)) {
                              appendError = "cannot append to " + folder->resultsFile().string();
                            }
                          });
  } catch (const std::exception& e) {
    err << "crucible bench: " << e.what() << "\n";
    return 3;
  }
  if (tempShrunk) fs::remove_all(*tempShrunk);
  if (!appendError.empty())
    err << "crucible bench: " << appendError << "; resuming will redo tasks\n";
  return finishBench(o, plan, std::move(run), out, err);
}

}  // namespace crucible::cli
