#pragma once
// The service's HTTP API (docs/SERVE.md), compatible with KernelGYM's evaluation server:
// POST /evaluate, POST /evaluate/batch, GET /status/{id}, GET /results/{id}, GET /health, and
// GET /tasks/next for the trainer's next task.

#include <chrono>
#include <cstddef>
#include <string>

#include "core/serve/eval_request.h"
#include "core/serve/http_server.h"

namespace crucible::serve {

class EvaluationService;
class TaskSource;

struct RouteSettings {
  std::string token;                   // "" = no authentication (loopback only)
  std::chrono::seconds maxWait{3600};  // how long POST /evaluate holds the connection
  std::size_t maxBatch = 256;          // requests in one POST /evaluate/batch
  RequestLimits limits;
};

/// The handler that answers the API from `service` and `tasks` (GET /tasks/next), which must
/// outlive it.
HttpHandler serviceRoutes(EvaluationService& service, TaskSource& tasks, RouteSettings settings);

}  // namespace crucible::serve
