#include "core/generate/http_client.h"

#include <exception>
#include <mutex>
#include <nlohmann/json.hpp>

#if CRUCIBLE_WITH_CURL
#include <curl/curl.h>
#endif

namespace crucible::generate {

namespace {

constexpr std::size_t kErrorBodyCap = 64 * 1024;

/// The server's own words from an error body: OpenAI's {"error": {"message"}}, a plain
/// {"error": "..."} or FastAPI's {"detail": ...}; else the start of the text.
std::string serverMessage(const std::string& body) {
  const auto parsed = nlohmann::json::parse(body, nullptr, false);
  if (parsed.is_object()) {
    for (const char* key : {"error", "detail", "message"}) {
      if (!parsed.contains(key)) continue;
      const auto& value = parsed[key];
      if (value.is_string()) return value.get<std::string>();
      if (value.is_object() && value.contains("message") && value["message"].is_string()) {
        return value["message"].get<std::string>();
      }
      return value.dump();
    }
  }
  std::string text = body.substr(0, 300);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text.empty() ? "(no message)" : text;
}

std::string statusAdvice(long status) {
  if (status == 401 || status == 403) {
    return " (the endpoint wants an API key: set CRUCIBLE_API_KEY or OPENAI_API_KEY)";
  }
  if (status == 404) {
    return " (is the URL right? An OpenAI-compatible base URL ends in /v1; is the model name "
           "one the server serves?)";
  }
  return "";
}

}  // namespace

#if CRUCIBLE_WITH_CURL

namespace {

struct Transfer {
  const std::function<void(std::string_view)>* onBody = nullptr;
  std::stop_token stop;
  CURL* curl = nullptr;
  long status = 0;
  std::string errorBody;  // a non-2xx answer's body, capped
  std::exception_ptr failure;
  bool cancelled = false;
};

long statusOf(Transfer& t) {
  if (t.status == 0) curl_easy_getinfo(t.curl, CURLINFO_RESPONSE_CODE, &t.status);
  return t.status;
}

std::size_t onWrite(char* data, std::size_t size, std::size_t count, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const std::size_t bytes = size * count;
  const long status = statusOf(t);
  if (status < 200 || status >= 300) {
    t.errorBody.append(
        data, std::min(bytes, kErrorBodyCap - std::min(kErrorBodyCap, t.errorBody.size())));
    return bytes;
  }
  try {
    (*t.onBody)(std::string_view(data, bytes));
    return bytes;
  } catch (...) {  // exceptions must not cross libcurl's C frames
    t.failure = std::current_exception();
    return 0;
  }
}

int onProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto& t = *static_cast<Transfer*>(user);
  if (t.stop.stop_requested()) {
    t.cancelled = true;
    return 1;
  }
  return 0;
}

void initialiseOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string transportMessage(CURLcode code, const std::string& url, const char* detail) {
  const std::string why = detail[0] != '\0' ? detail : curl_easy_strerror(code);
  switch (code) {
    case CURLE_COULDNT_CONNECT:
      return "cannot connect to " + url + " (" + why + "): is the server running there?";
    case CURLE_COULDNT_RESOLVE_HOST:
      return "cannot find the host of " + url + " (" + why + ")";
    case CURLE_OPERATION_TIMEDOUT:
      return "no answer from " + url + " in time (" + why + ")";
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
      return "'" + url + "' is not a usable http(s) URL (" + why + ")";
    default:
      return "the request to " + url + " failed: " + why;
  }
}

}  // namespace

bool httpSend(const HttpRequest& request, const std::function<void(std::string_view)>& onBody,
              std::stop_token stop) {
  initialiseOnce();
  CURL* curl = curl_easy_init();
  if (curl == nullptr) throw HttpError("cannot start an HTTP transfer (libcurl)", 0);
  struct curl_slist* headers = nullptr;
  for (const auto& h : request.headers) headers = curl_slist_append(headers, h.c_str());

  Transfer t;
  t.onBody = &onBody;
  t.stop = std::move(stop);
  t.curl = curl;
  char detail[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  if (request.method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
  }
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, onWrite);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, onProgress);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &t);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, detail);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, static_cast<long>(request.connectTimeout.count()));
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, static_cast<long>(request.idleTimeout.count()));
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
  const CURLcode code = curl_easy_perform(curl);
  statusOf(t);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);

  if (t.failure) std::rethrow_exception(t.failure);
  if (t.cancelled) return false;
  if (t.status != 0 && (t.status < 200 || t.status >= 300)) {
    throw HttpError(request.url + " answered HTTP " + std::to_string(t.status) + ": " +
                        serverMessage(t.errorBody) + statusAdvice(t.status),
                    t.status);
  }
  if (code != CURLE_OK) throw HttpError(transportMessage(code, request.url, detail), t.status);
  return true;
}

#else

bool httpSend(const HttpRequest& request, const std::function<void(std::string_view)>&,
              std::stop_token) {
  (void)serverMessage;
  (void)statusAdvice;
  throw HttpError(
      "this build of Crucible has no HTTP client (it was linked statically, without "
      "libcurl), so it cannot reach " +
          request.url,
      0);
}

#endif

}  // namespace crucible::generate
