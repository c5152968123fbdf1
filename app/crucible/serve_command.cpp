// `crucible serve`: the evaluation service over HTTP (core/serve, docs/SERVE.md), and
// `crucible lane`, the per-device process it starts.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <thread>

#include "app/crucible/cli_support.h"
#include "app/crucible/commands.h"
#include "app/crucible/interrupt.h"
#include "core/serve/http_server.h"
#include "core/serve/lane_loop.h"
#include "core/serve/routes.h"
#include "core/serve/service.h"
#include "core/serve/task_source.h"
#include "core/util/locations.h"

namespace crucible::cli {

namespace {

namespace fs = std::filesystem;

const std::string kServeUsage =
    "usage: crucible serve [options]\n"
    "\n"
    "  An evaluation service for RL training and batch work: POST /evaluate (reference_code,\n"
    "  kernel_code; KernelGYM's fields) answers with what `crucible verify --json` prints.\n"
    "  Also POST /evaluate/batch, GET /status/ID, GET /results/ID, GET /health.\n"
    "  Jobs are kept in the database before they are acknowledged; a restart loses none.\n"
    "\n"
    "options:\n"
    "  --host H        address to listen on (default 127.0.0.1); any other than loopback\n"
    "                  needs --token\n"
    "  --port P        port (default 8765; 0: any free one, printed at start)\n"
    "  --token T       require 'Authorization: Bearer T' (default: $CRUCIBLE_SERVE_TOKEN)\n"
    "  --lanes L       worker lanes, comma-separated cuda:N and cpu (default: every GPU,\n"
    "                  else cpu); one job at a time per lane\n"
    "  --backend B     the cpu lane's backend: opencl or interpret (default: opencl when an\n"
    "                  OpenCL driver is installed, else interpret)\n"
    "  --db FILE       the database (default: the user's data folder)\n"
    "  --queue N       jobs waiting at most (default 256); beyond it 429 and Retry-After\n"
    "  --max-wait S    seconds POST /evaluate holds a connection before answering 202 with\n"
    "                  the job's status (default 3600)\n"
    "  --tasks DIR     GET /tasks/next hands out DIR's tasks, fewer operators first, round\n"
    "                  and round (the bundled corpus, a tasks synth output)\n"
    "  --synth-ops N   ... or fresh tasks of N operators from `crucible tasks synth`, a batch\n"
    "                  of 8 at a time with a new seed\n"
    "  --ray ADDRESS   run each lane as a Ray actor on that cluster (a cuda:N lane asks Ray\n"
    "                  for one GPU); the Python with ray is $CRUCIBLE_RAY_PYTHON, else\n"
    "                  the project's .venv-verl\n";

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8765;
  std::string token;
  std::string lanes;
  std::string backend;
  std::string db;
  std::size_t queue = 256;
  int maxWait = 3600;
  std::string tasks;
  int synthOps = 0;
  std::string ray;
};

ServeOptions parseServe(const std::vector<std::string>& args) {
  ServeOptions o;
  if (const char* token = std::getenv("CRUCIBLE_SERVE_TOKEN")) o.token = token;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--host") {
      o.host = optionValue(args, i);
    } else if (a == "--port") {
      o.port = static_cast<int>(numberOption(args, i, 0));
      if (o.port > 65535) throw BadInput("--port must be at most 65535");
    } else if (a == "--token") {
      o.token = optionValue(args, i);
    } else if (a == "--lanes") {
      o.lanes = optionValue(args, i);
    } else if (a == "--backend") {
      o.backend = optionValue(args, i);
      if (o.backend != "opencl" && o.backend != "interpret") {
        throw BadInput("--backend is the cpu lane's: opencl or interpret");
      }
    } else if (a == "--db") {
      o.db = optionValue(args, i);
    } else if (a == "--queue") {
      o.queue = static_cast<std::size_t>(numberOption(args, i, 1));
    } else if (a == "--max-wait") {
      o.maxWait = static_cast<int>(numberOption(args, i, 1));
    } else if (a == "--tasks") {
      o.tasks = optionValue(args, i);
    } else if (a == "--ray") {
      o.ray = optionValue(args, i);
    } else if (a == "--synth-ops") {
      o.synthOps = static_cast<int>(numberOption(args, i, 1));
    } else {
      throw BadInput("unknown option " + a);
    }
  }
  if (!serve::isLoopback(o.host) && o.token.empty()) {
    throw BadInput("--host " + o.host +
                   " is reachable from other machines: give --token (or CRUCIBLE_SERVE_TOKEN)");
  }
  return o;
}

/// Every GPU as a lane, else the CPU.
std::string defaultLanes() {
  std::string lanes;
  for (int n = 0; n < 64; ++n) {
    std::error_code ec;
    if (!fs::exists("/dev/nvidia" + std::to_string(n), ec)) break;
    lanes += (lanes.empty() ? "cuda:" : ",cuda:") + std::to_string(n);
  }
  return lanes.empty() ? "cpu" : lanes;
}

}  // namespace

int runServe(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ServeOptions o;
  if (auto exit = parseCommandLine(args, "serve", kServeUsage, parseServe, o, out, err)) {
    return *exit;
  }
  watchForInterrupt();
  serve::ServiceOptions service;
  try {
    const std::string cpuBackend =
        !o.backend.empty() ? o.backend : (openclDriverRegistered() ? "opencl" : "interpret");
    service.lanes = serve::parseLanes(o.lanes.empty() ? defaultLanes() : o.lanes, cpuBackend);
  } catch (const serve::RequestError& e) {
    err << "crucible serve: --lanes: " << e.what() << "\n";
    return 2;
  }
  service.db = o.db.empty() ? store::Store::defaultDatabasePath() : o.db;
  service.laneProgram = (fs::path(executableDir()) / "crucible").string();
  service.maxQueue = o.queue;
  if (!o.ray.empty()) {
    const serve::RayTools ray = serve::locateRayTools();
    if (!ray.problem.empty()) {
      err << "crucible serve: --ray: " << ray.problem << "\n";
      return 2;
    }
    service.rayAddress = o.ray;
    service.rayPython = ray.python;
    service.rayBridge = ray.bridge;
  }
  serve::RouteSettings routes;
  routes.token = o.token;
  routes.maxWait = std::chrono::seconds(o.maxWait);
  routes.limits = service.limits;
  try {
    serve::TaskSourceOptions taskOptions;
    taskOptions.dir = o.tasks;
    taskOptions.synthOps = o.synthOps;
    taskOptions.program = service.laneProgram;
    taskOptions.scratch =
        (fs::path(temporaryRoot()) / ("crucible-serve-tasks-" + std::to_string(::getpid())))
            .string();
    serve::TaskSource tasks(taskOptions);
    serve::EvaluationService evaluations(service);
    serve::HttpServer server(o.host, o.port, serve::serviceRoutes(evaluations, tasks, routes));
    std::string lanes;
    for (const auto& lane : service.lanes) lanes += (lanes.empty() ? "" : ",") + lane.name;
    err << "crucible serve: listening on http://" << o.host << ":" << server.port() << " (lanes "
        << lanes << "; database " << service.db << ")" << std::endl;
    std::stop_token stop = interruptSource().get_token();
    std::mutex mutex;
    std::condition_variable_any wake;
    std::unique_lock lock(mutex);
    wake.wait(lock, stop, [] { return false; });
    err << "crucible serve: stopping; jobs not done stay queued for the next start" << std::endl;
  } catch (const std::exception& e) {
    err << "crucible serve: " << e.what() << "\n";
    return 3;
  }
  return 0;
}

int runLane(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  serve::LaneOptions options;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--backend" && i + 1 < args.size()) {
      options.backend = args[++i];
    } else {
      err << "usage: crucible lane [--backend B]  (started by crucible serve; JSON lines on "
             "stdin and stdout, docs/SERVE.md)\n";
      return 2;
    }
  }
  return serve::runLaneLoop(std::cin, out, options);
}

}  // namespace crucible::cli
