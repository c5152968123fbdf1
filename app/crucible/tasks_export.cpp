// `crucible tasks export OUT --format verl`: a task folder as verl's RL dataset (train.parquet
// and test.parquet, with the same rows as JSON lines beside them), core/serve/verl_dataset.h.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "app/crucible/cli_support.h"
#include "app/crucible/commands.h"
#include "core/bench/task_set.h"
#include "core/proc/process.h"
#include "core/serve/verl_dataset.h"
#include "core/util/locations.h"

namespace crucible::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct ExportOptions {
  fs::path out;
  fs::path dir;
  std::string format;
  std::vector<std::string> levels;
  serve::VerlExportOptions verl;
};

ExportOptions parseExport(const std::vector<std::string>& args) {
  ExportOptions o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--format") {
      o.format = optionValue(args, i);
    } else if (a == "--dir") {
      o.dir = optionValue(args, i);
    } else if (a == "--levels") {
      o.levels = bench::parseLevels(optionValue(args, i));
    } else if (a == "--template") {
      o.verl.promptTemplate = optionValue(args, i);
    } else if (a == "--backend") {
      o.verl.backend = optionValue(args, i);
    } else if (a == "--data-source") {
      o.verl.dataSource = optionValue(args, i);
    } else if (a == "--test-fraction") {
      o.verl.testFraction = numberOption(args, i, 0);
      if (o.verl.testFraction > 0.5) throw BadInput("--test-fraction must be at most 0.5");
    } else if (!a.empty() && a[0] == '-') {
      throw BadInput("unknown option " + a + " for tasks export");
    } else if (o.out.empty()) {
      o.out = a;
    } else {
      throw BadInput("one output folder only, not also '" + a + "'");
    }
  }
  if (o.out.empty()) throw BadInput("expected the output folder: tasks export OUT --format verl");
  if (o.format != "verl") throw BadInput("--format verl is the one format (verl's parquet)");
  return o;
}

/// Writes `rows` as OUT/NAME.jsonl, then as OUT/NAME.parquet through the worker's Python.
void writeSplit(const fs::path& out, const std::string& name, const std::vector<json>& rows) {
  const fs::path lines = out / (name + ".jsonl");
  {
    std::ofstream f(lines, std::ios::binary);
    for (const json& row : rows)
      f << row.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
    if (!f) throw std::runtime_error(lines.string() + ": cannot be written");
  }
  const WorkerLocation worker = locateWorker();
  if (!worker.problem.empty()) throw std::runtime_error(worker.problem);
  proc::ProcessSpec spec;
  spec.argv = {worker.python,
               (fs::path(worker.workerScript).parent_path() / "parquet_writer.py").string(),
               lines.string(), (out / (name + ".parquet")).string()};
  spec.env = {{"PATH", "/usr/bin:/bin"}, {"HOME", std::getenv("HOME") ? std::getenv("HOME") : "/"}};
  spec.resultChannel = false;
  spec.limits.wallTimeout = std::chrono::minutes(10);
  const proc::ExecutionResult r = proc::run(spec);
  if (!r.exitedCleanly()) {
    throw std::runtime_error("writing " + name +
                             ".parquet failed (is pyarrow installed? "
                             "scripts/setup.sh installs it): " +
                             r.stderrText);
  }
}

}  // namespace

int runTasksExport(const std::vector<std::string>& args, const fs::path& bundled, std::ostream& out,
                   std::ostream& err) {
  ExportOptions o;
  if (auto exit = parseCommandLine(
          args, "tasks export",
          "usage: crucible tasks export OUT --format verl [options] (crucible tasks --help)\n",
          parseExport, o, out, err)) {
    return *exit;
  }
  if (o.dir.empty()) o.dir = bundled;
  try {
    const auto tasks = bench::listTasks(o.dir, o.levels);
    if (tasks.empty()) throw std::runtime_error(o.dir.string() + ": no tasks");
    const serve::VerlDataset dataset = serve::verlRows(o.dir, tasks, o.verl);
    fs::create_directories(o.out);
    writeSplit(o.out, "train", dataset.train);
    writeSplit(o.out, "test", dataset.test);
    out << dataset.train.size() << " train and " << dataset.test.size() << " test rows from "
        << tasks.size() << " tasks of " << o.dir.string() << " written to " << o.out.string()
        << " (train.parquet, test.parquet)\n";
  } catch (const std::exception& e) {
    err << "crucible tasks export: " << e.what() << "\n";
    return 2;
  }
  return 0;
}

}  // namespace crucible::cli
