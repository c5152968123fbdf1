#pragma once
// A small HTTP/1.1 server on Boost.Beast for the evaluation service: one thread accepts, one
// thread serves each connection (keep-alive), at most `maxConnections` at once. Bodies over
// `maxBodyBytes` are refused with 413 before they are read; a connection silent for
// `idleTimeout` is closed. The handler sees whole requests and returns whole responses.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stop_token>
#include <string>
#include <thread>

namespace crucible::serve {

struct HttpRequest {
  std::string method;                          // GET, POST, ...
  std::string target;                          // path and query, as sent
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
};

struct HttpResponse {
  int status = 200;
  nlohmann::json body = nlohmann::json::object();
  std::map<std::string, std::string> headers;  // beyond Content-Type (application/json)
};

/// Called on the connection's thread; `stop` is requested when the server stops (a handler that
/// waits for a job must give up then).
using HttpHandler = std::function<HttpResponse(const HttpRequest&, std::stop_token stop)>;

struct HttpLimits {
  std::size_t maxBodyBytes = 8 * 1024 * 1024;
  int maxConnections = 64;
  std::chrono::seconds idleTimeout{120};
};

class HttpServer {
 public:
  /// Binds `host`:`port` (0: any free port) and starts serving. Throws std::runtime_error with
  /// the reason when the address cannot be bound.
  HttpServer(const std::string& host, int port, HttpHandler handler, HttpLimits limits = {});
  /// Stops accepting and closes every connection.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return port_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

/// Whether `host` is a loopback address (127.0.0.0/8, ::1, localhost).
bool isLoopback(const std::string& host);

}  // namespace crucible::serve
