#pragma once
// A small HTTP client for the endpoint client (libcurl underneath): one request at a time, the
// body delivered as it arrives, cancellable through a stop token, and failures turned into
// messages that say what to do (the server is not running, the URL is wrong, the key is missing).

#include <chrono>
#include <functional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "core/generate/generator.h"

namespace crucible::generate {

/// A request that failed; what() is for the user. `status` is the HTTP status, 0 when no answer
/// came.
class HttpError : public GenerateError {
 public:
  HttpError(const std::string& message, long status) : GenerateError(message), status_(status) {}
  long status() const { return status_; }

 private:
  long status_;
};

struct HttpRequest {
  std::string method = "POST";  // POST | GET
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
  std::chrono::seconds connectTimeout{10};
  // A stream that delivers nothing for this long is given up (prefill of a long prompt can take
  // minutes on a slow machine).
  std::chrono::seconds idleTimeout{600};
};

/// Sends the request. A 2xx answer's body goes to `onBody` as it arrives; any other answer
/// throws HttpError with the server's message. A stop request ends the transfer within about a
/// second and returns false. Returns true when the whole body arrived.
bool httpSend(const HttpRequest& request, const std::function<void(std::string_view)>& onBody,
              std::stop_token stop = {});

}  // namespace crucible::generate
