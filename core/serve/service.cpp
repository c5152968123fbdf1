#include "core/serve/service.h"

#include <signal.h>

#include "core/proc/line_child.h"
#include "core/util/sha256.h"

namespace crucible::serve {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// Beyond the candidate's own timeout, what the reference's run, the baseline's compile and the
// comparison may take before a silent lane is taken for hung.
constexpr auto kLaneMargin = std::chrono::seconds(900);

/// The device a lane pinned to GPU `n` sees: the n-th of the service's own
/// CUDA_VISIBLE_DEVICES when it has one (so cuda:0 is the first GPU it was given), else n.
std::string visibleGpu(const std::map<std::string, std::string>& env, int n) {
  const auto given = env.find("CUDA_VISIBLE_DEVICES");
  if (given == env.end() || given->second.empty()) return std::to_string(n);
  std::size_t start = 0;
  for (int i = 0; start <= given->second.size(); ++i) {
    const auto comma = std::min(given->second.find(',', start), given->second.size());
    if (i == n) return given->second.substr(start, comma - start);
    start = comma + 1;
  }
  return std::to_string(n);
}

/// The verification as the store keeps it, so the workbench lists what the service judged.
std::optional<store::VerificationRecord> recordOf(const EvalRequest& request, const json& result) {
  const json& evaluation = result.value("evaluation", json());
  if (!evaluation.is_object() || evaluation.value("verdict", json()).is_null()) return std::nullopt;
  store::VerificationRecord record;
  try {
    record.evaluation = evaluation.get<Evaluation>();
  } catch (const std::exception&) {
    return std::nullopt;
  }
  record.task.name = "served-" + util::sha256Hex(request.referenceCode).substr(0, 12);
  record.task.source = request.referenceCode;
  const bool response = result.value("from_response", false);
  record.candidate.origin = response ? "response" : "service";
  record.candidate.rawResponse = response ? request.kernelCode : "";
  record.candidate.code = result.value("candidate_code", request.kernelCode);
  record.note = "crucible serve job " + request.taskId;
  return record;
}

}  // namespace

// A lane's child is the lane thread's own; what /health shows is copied under the mutex.
struct EvaluationService::Lane {
  LaneSpec spec;
  std::unique_ptr<proc::LineChild> child;
  std::string state = "starting";  // starting | idle | busy | down
  std::string job;
  int pid = 0;
  std::string node;  // where a Ray lane's actor runs
  int starts = 0;
  std::string lastError;
};

EvaluationService::EvaluationService(ServiceOptions options)
    : options_(std::move(options)), table_(options_.db) {
  // What a service that went down left: queued again, in the order it was accepted.
  for (const JobRecord& job : table_.unfinished()) {
    if (job.state == JobState::Running) table_.markQueued(job.id);
    queue_.push_back(job.id);
    backends_[job.id] = job.request.backend;
  }
  for (const LaneSpec& spec : options_.lanes) {
    lanes_.push_back(std::make_unique<Lane>());
    lanes_.back()->spec = spec;
  }
  for (auto& lane : lanes_) {
    threads_.emplace_back([this, l = lane.get()](std::stop_token stop) { run(*l, stop); });
  }
}

EvaluationService::~EvaluationService() {
  for (auto& t : threads_) t.request_stop();
  changed_.notify_all();
  threads_.clear();  // joins
}

JobRecord EvaluationService::submit(EvalRequest request) {
  bool served = false;
  for (const auto& lane : lanes_) served = served || laneServes(lane->spec, request.backend);
  if (!served) {
    throw RequestError(400, "no lane of this service runs backend '" + request.backend + "'");
  }
  std::unique_lock lock(mutex_);
  if (request.taskId.empty()) {
    request.taskId =
        "job-" +
        util::sha256Hex(request.digest() + std::to_string(Clock::now().time_since_epoch().count()))
            .substr(0, 20);
  } else if (auto known = table_.find(request.taskId)) {
    if (known->digest != request.digest()) {
      throw RequestError(
          409, "task_id '" + request.taskId + "' was used for another request; use a new id");
    }
    return *known;
  }
  if (queue_.size() >= options_.maxQueue) {
    throw RequestError(429, "the queue is full (" + std::to_string(options_.maxQueue) +
                                " jobs waiting); retry later");
  }
  auto [job, created] = table_.insertOrGet(request.taskId, request);
  if (created) {
    queue_.push_back(job.id);
    backends_[job.id] = request.backend;
    changed_.notify_all();
  }
  return job;
}

std::optional<JobRecord> EvaluationService::find(const std::string& id) {
  return table_.find(id);
}

std::optional<JobRecord> EvaluationService::wait(const std::string& id, Clock::time_point deadline,
                                                 std::stop_token stop) {
  std::unique_lock lock(mutex_);
  std::optional<JobRecord> job;
  changed_.wait_until(lock, stop, deadline, [&] {
    job = table_.find(id);
    return !job || job->state == JobState::Done;
  });
  return job ? job : table_.find(id);
}

std::optional<std::string> EvaluationService::takeJob(Lane& lane, std::stop_token stop) {
  std::unique_lock lock(mutex_);
  std::optional<std::string> taken;
  changed_.wait(lock, stop, [&] {
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      if (laneServes(lane.spec, backends_[*it])) {
        taken = *it;
        queue_.erase(it);
        backends_.erase(*taken);
        return true;
      }
    }
    return false;
  });
  if (taken) {
    lane.state = "busy";
    lane.job = *taken;
  }
  return taken;
}

bool EvaluationService::ready(Lane& lane, std::stop_token stop) {
  if (lane.child && lane.child->running()) return true;
  std::map<std::string, std::string> env = proc::currentEnvironment();
  std::vector<std::string> argv{options_.laneProgram, "lane", "--backend", lane.spec.backend};
  if (!options_.rayAddress.empty()) {
    // Ray places the actor and gives it its GPU; this process is its stand-in here.
    argv = {options_.rayPython, options_.rayBridge,       "--address", options_.rayAddress,
            "--crucible",       options_.laneProgram,     "--backend", lane.spec.backend,
            "--num-gpus",       lane.spec.gpu ? "1" : "0"};
  } else if (lane.spec.gpu) {
    env["CUDA_VISIBLE_DEVICES"] = visibleGpu(env, *lane.spec.gpu);
  }
  lane.child = std::make_unique<proc::LineChild>(argv, env);
  std::string why;
  const auto deadline = Clock::now() + options_.laneStartLimit;
  while (auto line = lane.child->next(deadline, stop)) {
    if (!line->contains("ready")) continue;
    if (line->value("ready", false)) {
      std::lock_guard lock(mutex_);
      ++lane.starts;
      lane.pid = line->value("pid", 0);
      lane.node = line->value("node", std::string());
      if (lane.state != "busy") lane.state = "idle";
      return true;
    }
    why = line->value("error", std::string("the lane refused to start"));
    break;
  }
  if (why.empty()) {
    why = lane.child->running() ? "the lane did not start within " +
                                      std::to_string(options_.laneStartLimit.count()) + " s"
                                : "the lane ended as it started: " + lane.child->endedMessage();
  }
  lane.child.reset();
  std::lock_guard lock(mutex_);
  lane.lastError = why;
  lane.pid = 0;
  lane.state = "down";
  return false;
}

void EvaluationService::run(Lane& lane, std::stop_token stop) {
  ready(lane, stop);  // started before the first job, so /health shows whether it can work
  while (!stop.stop_requested()) {
    const auto id = takeJob(lane, stop);
    if (!id) return;
    auto job = table_.find(*id);
    if (!job) continue;
    const int attempts = job->attempts + 1;
    table_.markRunning(*id, lane.spec.name, attempts);
    if (!ready(lane, stop)) {
      if (stop.stop_requested()) {
        table_.markQueued(*id);
        return;
      }
      requeueOrFail(lane, *id, attempts, "lane " + lane.spec.name + " is down: " + lastError(lane));
      std::this_thread::sleep_for(std::chrono::seconds(1));  // no busy loop on a broken lane
      continue;
    }
    lane.child->send(json{{"job", *id}, {"request", job->request}});
    const auto limit = std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(job->request.timeoutSeconds)) +
                       kLaneMargin;
    std::optional<json> answer;
    while (auto line = lane.child->next(Clock::now() + limit, stop)) {
      if (line->value("job", "") == *id) {
        answer = std::move(line);
        break;
      }
    }
    if (stop.stop_requested()) {  // shutting down: the job stays for the next start
      table_.markQueued(*id);
      return;
    }
    if (!answer) {
      const std::string why =
          lane.child->running() ? "lane " + lane.spec.name + " gave no answer in time"
                                : "lane " + lane.spec.name + " died: " + lane.child->endedMessage();
      lane.child.reset();  // killed if still there; the next job starts a fresh one
      {
        std::lock_guard lock(mutex_);
        lane.pid = 0;
      }
      requeueOrFail(lane, *id, attempts, why);
      continue;
    }
    answer->erase("job");
    std::optional<store::VerificationRecord> record = recordOf(job->request, *answer);
    table_.finish(*id, *answer, record);
    std::lock_guard lock(mutex_);
    lane.state = "idle";
    lane.job.clear();
    changed_.notify_all();
  }
}

std::string EvaluationService::lastError(Lane& lane) {
  std::lock_guard lock(mutex_);
  return lane.lastError;
}

void EvaluationService::requeueOrFail(Lane& lane, const std::string& id, int attempts,
                                      const std::string& why) {
  const bool retry = attempts < options_.maxAttempts;
  auto job = table_.find(id);
  if (retry) {
    table_.markQueued(id);
  } else {
    table_.finish(
        id,
        failedResult("infrastructure", why + " (tried " + std::to_string(attempts) + " times)",
                     "infrastructure", job ? job->request : EvalRequest{}),
        std::nullopt);
  }
  std::lock_guard lock(mutex_);
  if (retry) {
    queue_.push_front(id);
    backends_[id] = job ? job->request.backend : "";
  }
  lane.lastError = why;
  lane.state = lane.child ? "idle" : "down";
  lane.job.clear();
  changed_.notify_all();
}

json EvaluationService::health() {
  json lanes = json::array();
  std::size_t depth = 0;
  {
    std::lock_guard lock(mutex_);
    depth = queue_.size();
    for (const auto& lane : lanes_) {
      const bool up = lane->pid > 0 && ::kill(lane->pid, 0) == 0;
      lanes.push_back({{"name", lane->spec.name},
                       {"backend", lane->spec.backend},
                       {"state", up || lane->state == "starting" ? lane->state : "down"},
                       {"job", lane->job.empty() ? json() : json(lane->job)},
                       {"pid", up ? json(lane->pid) : json()},
                       {"node", lane->node},
                       {"starts", lane->starts},
                       {"last_error", lane->lastError}});
    }
  }
  return json{{"status", "ok"},
              {"lanes", lanes},
              {"queue", {{"depth", depth}, {"capacity", options_.maxQueue}}},
              {"jobs", table_.counts()}};
}

json resultBody(const JobRecord& job) {
  json body = job.result && job.result->contains("evaluation") ? (*job.result)["evaluation"]
                                                               : json::object();
  const bool infrastructure = body.contains("error") && body["error"].is_object() &&
                              body["error"].value("blame", "") == "infrastructure";
  body["task_id"] = job.id;
  body["status"] = infrastructure ? "failed" : "completed";
  return body;
}

json statusBody(const JobRecord& job) {
  return json{{"task_id", job.id},           {"status", jobStateName(job.state)},
              {"attempts", job.attempts},    {"lane", job.lane},
              {"created_at", job.createdAt}, {"updated_at", job.updatedAt}};
}

}  // namespace crucible::serve
