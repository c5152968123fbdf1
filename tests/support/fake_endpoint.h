#pragma once
// Starts tests/support/fake_openai_server.py for one test: writes its script, reads the port it
// listens on, and reads back the requests it recorded. The server exits when this object closes
// its stdin; this object ends it at once.

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace crucible::testing {

class FakeEndpoint {
 public:
  /// `python` runs `server` (fake_openai_server.py) with `script`; files go in `dir`.
  FakeEndpoint(const std::string& python, const std::string& server, const nlohmann::json& script,
               const std::filesystem::path& dir)
      : record_(dir / "requests.jsonl") {
    std::filesystem::create_directories(dir);
    const auto scriptFile = dir / "script.json";
    std::ofstream(scriptFile) << script.dump(2);
    std::filesystem::remove(record_);
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
      throw std::runtime_error("pipe failed");
    }
    pid_ = fork();
    if (pid_ == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      execl(python.c_str(), python.c_str(), server.c_str(), "--script", scriptFile.c_str(),
            "--record", record_.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    stdin_ = in[1];
    std::string line;
    char c = 0;
    while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
    close(out[0]);
    if (line.rfind("PORT ", 0) != 0) {
      throw std::runtime_error("the fake endpoint did not start: '" + line + "'");
    }
    url_ = "http://127.0.0.1:" + line.substr(5) + "/v1";
  }
  ~FakeEndpoint() {
    if (stdin_ >= 0) close(stdin_);
    // Its records are written before each answer, so nothing is lost by ending it at once.
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  FakeEndpoint(const FakeEndpoint&) = delete;
  FakeEndpoint& operator=(const FakeEndpoint&) = delete;

  /// ".../v1"
  const std::string& url() const { return url_; }

  /// Every request so far: {"method", "path", "authorization", "body"}.
  std::vector<nlohmann::json> requests() const {
    std::vector<nlohmann::json> list;
    std::ifstream in(record_);
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) list.push_back(nlohmann::json::parse(line));
    }
    return list;
  }

  /// Only the chat-completion requests' bodies.
  std::vector<nlohmann::json> chatRequests() const {
    std::vector<nlohmann::json> bodies;
    for (const auto& r : requests()) {
      if (r["method"] == "POST") bodies.push_back(r["body"]);
    }
    return bodies;
  }

 private:
  std::filesystem::path record_;
  std::string url_;
  pid_t pid_ = -1;
  int stdin_ = -1;
};

}  // namespace crucible::testing
