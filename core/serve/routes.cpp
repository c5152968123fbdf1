#include "core/serve/routes.h"

#include <algorithm>
#include <optional>

#include "core/serve/service.h"
#include "core/serve/task_source.h"

namespace crucible::serve {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr const char* kRetryAfterSeconds = "5";

HttpResponse error(int status, const std::string& message) {
  HttpResponse r{status, json{{"error", message}}, {}};
  if (status == 429) r.headers["Retry-After"] = kRetryAfterSeconds;
  if (status == 401) r.headers["WWW-Authenticate"] = "Bearer";
  return r;
}

/// Compares without stopping at the first difference: how long it takes says nothing of the
/// token.
bool sameSecret(const std::string& given, const std::string& expected) {
  unsigned difference = given.size() == expected.size() ? 0U : 1U;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    difference |= static_cast<unsigned char>(expected[i]) ^
                  static_cast<unsigned char>(i < given.size() ? given[i] : 0);
  }
  return difference == 0;
}

json parseBody(const HttpRequest& request) {
  json body = json::parse(request.body, nullptr, false);
  if (body.is_discarded()) throw RequestError(400, "the request body is not valid JSON");
  return body;
}

/// The path without its query, and whether the query asks not to wait (`wait=0`).
std::pair<std::string, bool> splitTarget(const std::string& target) {
  const auto q = target.find('?');
  const std::string path = target.substr(0, q);
  const std::string query = q == std::string::npos ? "" : target.substr(q + 1);
  return {path, query.find("wait=0") != std::string::npos ||
                    query.find("wait=false") != std::string::npos};
}

HttpResponse doneOrPending(const JobRecord& job) {
  if (job.state == JobState::Done) return HttpResponse{200, resultBody(job), {}};
  return HttpResponse{202, statusBody(job), {}};
}

class Routes {
 public:
  Routes(EvaluationService& service, TaskSource& tasks, RouteSettings settings)
      : service_(service), tasks_(tasks), settings_(std::move(settings)) {}

  HttpResponse operator()(const HttpRequest& request, std::stop_token stop) {
    if (!settings_.token.empty()) {
      const auto header = request.headers.find("authorization");
      const std::string given = header == request.headers.end() ? "" : header->second;
      if (!sameSecret(given, "Bearer " + settings_.token)) {
        return error(401, "this service needs 'Authorization: Bearer TOKEN'");
      }
    }
    const auto [path, noWait] = splitTarget(request.target);
    try {
      return route(request, path, noWait, stop);
    } catch (const RequestError& e) {
      return error(e.status(), e.what());
    }
  }

 private:
  HttpResponse route(const HttpRequest& request, const std::string& path, bool noWait,
                     std::stop_token stop) {
    const bool get = request.method == "GET";
    const bool post = request.method == "POST";
    if (path == "/health") return get ? health() : notAllowed();
    if (path == "/tasks/next") return get ? HttpResponse{200, tasks_.next(stop), {}} : notAllowed();
    if (path == "/evaluate") return post ? evaluate(request, noWait, stop) : notAllowed();
    if (path == "/evaluate/batch") return post ? batch(request, noWait, stop) : notAllowed();
    for (const std::string prefix : {"/status/", "/results/"}) {
      if (path.rfind(prefix, 0) != 0) continue;
      if (!get) return notAllowed();
      const auto job = service_.find(path.substr(prefix.size()));
      if (!job) return error(404, "no job '" + path.substr(prefix.size()) + "'");
      return prefix == "/status/" ? HttpResponse{200, statusBody(*job), {}} : doneOrPending(*job);
    }
    return error(404, "no such endpoint: " + path);
  }

  static HttpResponse notAllowed() { return error(405, "method not allowed here"); }

  HttpResponse health() {
    json body = service_.health();
    body["tasks"] = tasks_.describe();
    return HttpResponse{200, body, {}};
  }

  Clock::time_point deadline() const { return Clock::now() + settings_.maxWait; }

  HttpResponse evaluate(const HttpRequest& request, bool noWait, std::stop_token stop) {
    const JobRecord job = service_.submit(parseEvalRequest(parseBody(request), settings_.limits));
    if (noWait || job.state == JobState::Done) return doneOrPending(job);
    const auto done = service_.wait(job.id, deadline(), stop);
    return doneOrPending(done ? *done : job);
  }

  HttpResponse batch(const HttpRequest& request, bool noWait, std::stop_token stop) {
    const json body = parseBody(request);
    const json& items = body.is_array() ? body : body.value("requests", json());
    if (!items.is_array()) throw RequestError(400, "expected {\"requests\": [...]}");
    if (items.size() > settings_.maxBatch) {
      throw RequestError(
          413, "at most " + std::to_string(settings_.maxBatch) + " requests in one batch");
    }
    // Each request on its own: one that is refused does not refuse the others.
    std::vector<std::optional<std::string>> ids;
    json results = json::array();
    for (const json& item : items) {
      try {
        ids.push_back(service_.submit(parseEvalRequest(item, settings_.limits)).id);
        results.push_back(nullptr);
      } catch (const RequestError& e) {
        ids.push_back(std::nullopt);
        results.push_back({{"status", "rejected"}, {"code", e.status()}, {"error", e.what()}});
      }
    }
    const auto until = deadline();
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (!ids[i]) continue;
      const auto job = noWait ? service_.find(*ids[i]) : service_.wait(*ids[i], until, stop);
      if (!job) continue;
      results[i] = job->state == JobState::Done ? resultBody(*job) : statusBody(*job);
    }
    return HttpResponse{200, json{{"results", results}}, {}};
  }

  EvaluationService& service_;
  TaskSource& tasks_;
  RouteSettings settings_;
};

}  // namespace

HttpHandler serviceRoutes(EvaluationService& service, TaskSource& tasks, RouteSettings settings) {
  auto routes = std::make_shared<Routes>(service, tasks, std::move(settings));
  return [routes](const HttpRequest& request, std::stop_token stop) {
    return (*routes)(request, stop);
  };
}

}  // namespace crucible::serve
