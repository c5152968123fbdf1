#include "core/bench/runner.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "core/bench/shrink.h"
#include "core/util/locations.h"
#include "core/util/sha256.h"
#include "core/verify/verifier.h"

namespace crucible::bench {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// The reference as it will run: read, shrunk and written to shrunkDir when asked.
struct PreparedReference {
  std::string path;
  std::string source;
};

PreparedReference prepare(const BenchTask& task, const BenchOptions& options) {
  const auto source = readFile(task.path.string());
  if (!source) throw BadInput(task.path.string() + ": cannot read the file");
  if (!options.shrink) return {task.path.string(), *source};
  const ShrinkResult shrunk = shrinkSource(*source, *options.shrink);
  const fs::path path = fs::path(options.shrunkDir) / task.file;
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << shrunk.source;
  if (!fs::exists(path)) throw std::runtime_error("cannot write " + path.string());
  return {path.string(), shrunk.source};
}

class Bench {
 public:
  Bench(const std::vector<BenchTask>& tasks, const BenchOptions& options,
        const GeneratorFactory& makeGenerator, const std::map<std::string, TaskResult>& finished,
        std::stop_token stop, const std::function<void(const BenchEvent&)>& onEvent)
      : tasks_(tasks),
        options_(options),
        makeGenerator_(makeGenerator),
        finished_(finished),
        stop_(std::move(stop)),
        onEvent_(onEvent),
        results_(tasks.size()) {}

  BenchRun run() {
    start_ = Clock::now();
    const int jobs = std::max(1, std::min<int>(options_.jobs, static_cast<int>(tasks_.size())));
    {
      std::vector<std::jthread> workers;
      for (int i = 0; i < jobs; ++i) workers.emplace_back([this] { work(); });
    }
    BenchRun run;
    for (auto& r : results_) {
      if (r) run.tasks.push_back(std::move(*r));
    }
    run.skipped = skipped_;
    run.interrupted = stop_.stop_requested();
    return run;
  }

 private:
  void work() {
    std::unique_ptr<generate::Generator> generator;
    for (std::size_t i = next_++; i < tasks_.size() && !stop_.stop_requested(); i = next_++) {
      const BenchTask& task = tasks_[i];
      std::optional<TaskResult> result;
      try {
        result = runTask(task, generator);
      } catch (const std::exception& e) {
        result = failed(task, e.what());
      }
      if (!result) continue;  // interrupted mid-task: not finished
      results_[i] = std::move(result);
    }
  }

  TaskResult rowFor(const BenchTask& task) const {
    TaskResult r;
    r.id = task.id;
    r.file = task.file;
    r.name = task.name;
    r.level = task.level;
    r.problemId = task.problemId;
    return r;
  }

  TaskResult failed(const BenchTask& task, const std::string& why) {
    TaskResult r = rowFor(task);
    r.error = why;
    report(BenchEvent::Kind::Finished, task, r, true);
    return r;
  }

  std::optional<TaskResult> runTask(const BenchTask& task,
                                    std::unique_ptr<generate::Generator>& generator) {
    TaskResult row = rowFor(task);
    PreparedReference reference;
    try {
      reference = prepare(task, options_);
    } catch (const BadInput& e) {
      return failed(task, std::string("reference: ") + e.what());
    }
    row.sourceSha256 = util::sha256Hex(reference.source);
    if (const auto it = finished_.find(task.id); it != finished_.end() && it->second.resumable() &&
                                                 it->second.sourceSha256 == row.sourceSha256) {
      report(BenchEvent::Kind::Skipped, task, it->second, false);
      return it->second;
    }
    report(BenchEvent::Kind::Started, task, row, false);
    if (!generator) generator = makeGenerator_();

    generate::GenerationRequest request = options_.request;
    request.mode = generate::SearchMode::BestOfN;
    request.generate.referencePath = reference.path;
    request.generate.referenceSource = reference.source;
    request.generate.referenceName = task.name;
    request.verify.referencePath = reference.path;
    request.task = store::TaskInput{task.id, reference.path, reference.source};

    const auto began = Clock::now();
    generate::GenerationResult result;
    try {
      result = generate::runGeneration(*generator, request, stop_);
    } catch (const BadInput& e) {
      return failed(task, std::string("reference: ") + e.what());
    }
    if (result.interrupted) return std::nullopt;
    for (const auto& c : result.candidates) {
      if (!c.evaluation) continue;
      row.samples.push_back(sampleFrom(*c.evaluation, c.id));
      if (row.device.empty()) row.device = c.evaluation->device;
    }
    row.chosen = keptSample(row.samples);
    row.sessionId = result.sessionId;
    if (!result.generatorError.empty()) row.error = "generator: " + result.generatorError;
    if (row.samples.empty() && row.error.empty()) row.error = "the model wrote no candidate";
    row.seconds = std::chrono::duration<double>(Clock::now() - began).count();
    report(BenchEvent::Kind::Finished, task, row, true);
    return row;
  }

  void report(BenchEvent::Kind kind, const BenchTask& task, const TaskResult& row, bool ran) {
    std::lock_guard lock(mutex_);
    BenchEvent event;
    event.kind = kind;
    event.task = &task;
    event.result = &row;
    event.total = static_cast<int>(tasks_.size());
    event.elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    if (kind == BenchEvent::Kind::Skipped) ++skipped_;
    if (kind != BenchEvent::Kind::Started) ++done_;
    if (kind == BenchEvent::Kind::Finished && ran) ++ran_;
    event.done = done_;
    if (ran_ > 0) {
      // Wall time per task run so far (parallel jobs included; resumed tasks take no time)
      // times the tasks left.
      event.etaSeconds = event.elapsed / ran_ * (event.total - done_);
    }
    if (onEvent_) onEvent_(event);
  }

  const std::vector<BenchTask>& tasks_;
  const BenchOptions& options_;
  const GeneratorFactory& makeGenerator_;
  const std::map<std::string, TaskResult>& finished_;
  std::stop_token stop_;
  const std::function<void(const BenchEvent&)>& onEvent_;
  std::vector<std::optional<TaskResult>> results_;
  std::atomic<std::size_t> next_{0};
  std::mutex mutex_;
  Clock::time_point start_;
  int done_ = 0, ran_ = 0, skipped_ = 0;
};

}  // namespace

BenchRun runBench(const std::vector<BenchTask>& tasks, const BenchOptions& options,
                  const GeneratorFactory& makeGenerator,
                  const std::map<std::string, TaskResult>& finished, std::stop_token stop,
                  const std::function<void(const BenchEvent&)>& onEvent) {
  if (options.shrink && options.shrunkDir.empty()) {
    throw std::invalid_argument("runBench: --shrink needs a folder for the shrunk tasks");
  }
  return Bench(tasks, options, makeGenerator, finished, std::move(stop), onEvent).run();
}

}  // namespace crucible::bench
