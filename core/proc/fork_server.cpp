#include "core/proc/fork_server.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <future>
#include <system_error>

namespace crucible::proc {

namespace {

using nlohmann::json;

constexpr std::size_t kMaxMessage = 1 << 16;
// The child answers with its pid within milliseconds of the fork; a server that takes longer
// is stuck.
constexpr std::chrono::milliseconds kSpawnAnswer{30'000};

std::string errorText(int err) {
  return std::system_category().message(err);
}

/// Waits up to `timeout` for one message on `fd`; nullopt on timeout, an empty string on EOF.
std::optional<std::string> receive(int fd, std::chrono::milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  int ready;
  do {
    ready = ::poll(&p, 1, static_cast<int>(timeout.count()));
  } while (ready < 0 && errno == EINTR);
  if (ready <= 0) return std::nullopt;
  std::string buffer(kMaxMessage, '\0');
  ssize_t got;
  do {
    got = ::recv(fd, buffer.data(), buffer.size(), 0);
  } while (got < 0 && errno == EINTR);
  if (got <= 0) return std::string();
  buffer.resize(static_cast<std::size_t>(got));
  return buffer;
}

bool sendWithDescriptors(int socket, const std::string& message, const std::vector<int>& fds) {
  iovec iov{const_cast<char*>(message.data()), message.size()};
  std::vector<char> control(CMSG_SPACE(sizeof(int) * fds.size()), 0);
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  cmsghdr* header = CMSG_FIRSTHDR(&msg);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
  std::memcpy(CMSG_DATA(header), fds.data(), sizeof(int) * fds.size());
  ssize_t sent;
  do {
    sent = ::sendmsg(socket, &msg, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  return sent == static_cast<ssize_t>(message.size());
}

}  // namespace

std::shared_ptr<ForkServer> ForkServer::start(ProcessSpec spec, std::vector<std::string> modeArgs,
                                              std::chrono::milliseconds readyTimeout,
                                              std::string& error) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
    error = "cannot create the fork server's socket: " + errorText(errno);
    return nullptr;
  }
  std::shared_ptr<ForkServer> server(new ForkServer());
  server->control_ = pair[0];
  server->program_ = spec.argv;
  spec.argv.insert(spec.argv.end(), modeArgs.begin(), modeArgs.end());
  spec.inheritedFd = pair[1];
  spec.resultChannel = false;
  spec.env["CRUCIBLE_FORK_SERVER_FD"] = "3";
  spec.limits.wallTimeout = std::chrono::milliseconds::max();
  // The server's end is closed here once the server has it, so that the server's death reads
  // as the end of the control socket.
  auto theirs = std::make_shared<int>(pair[1]);
  auto closeTheirs = [theirs] {
    if (*theirs >= 0) ::close(std::exchange(*theirs, -1));
  };
  spec.onStarted = [closeTheirs](int) { closeTheirs(); };
  auto ended = std::make_shared<std::promise<ExecutionResult>>();
  auto endedResult = ended->get_future();
  server->thread_ =
      std::jthread([spec = std::move(spec), ended, closeTheirs](std::stop_token stop) mutable {
        auto result = run(spec, stop);
        closeTheirs();
        ended->set_value(std::move(result));
      });

  const auto hello = receive(server->control_, readyTimeout);
  if (hello && !hello->empty()) {
    server->hello_ = json::parse(*hello, nullptr, false);
    if (server->hello_.is_object() && server->hello_.value("ready", false)) return server;
  }
  // No hello: say why from what the server left behind.
  server->thread_.request_stop();
  if (!hello)
    error =
        "the fork server was not ready after " + std::to_string(readyTimeout.count() / 1000) + " s";
  const auto result = endedResult.get();
  if (error.empty()) {
    error = result.launchFailed
                ? result.launchError
                : "the fork server ended before it was ready: " + result.stderrText.substr(0, 2000);
  }
  return nullptr;
}

ForkServer::~ForkServer() {
  // The control socket's end lets the server reap its children; the stop then kills the server
  // (and, through their parent-death signal, any child still running) without waiting for it.
  if (control_ >= 0) ::shutdown(control_, SHUT_RDWR);
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
  if (control_ >= 0) ::close(control_);
}

ForkServer::Spawned ForkServer::spawn(const std::vector<std::string>& argv, const json& env,
                                      const std::string& workingDir, const json& limits,
                                      const std::vector<int>& fds) {
  Spawned spawned;
  if (argv.size() < program_.size() ||
      !std::equal(program_.begin(), program_.end(), argv.begin())) {
    spawned.error = "the program is not the fork server's";
    return spawned;
  }
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
    spawned.error = "cannot create a socket: " + errorText(errno);
    return spawned;
  }
  const json request = {
      {"argv",
       std::vector<std::string>(argv.begin() + static_cast<long>(program_.size()), argv.end())},
      {"env", env},
      {"cwd", workingDir},
      {"limits", limits}};
  std::vector<int> sent{pair[1]};
  sent.insert(sent.end(), fds.begin(), fds.end());
  bool delivered;
  {
    std::lock_guard lock(sendMutex_);
    delivered = sendWithDescriptors(control_, request.dump(), sent);
  }
  const int sendError = errno;
  ::close(pair[1]);
  if (!delivered) {
    ::close(pair[0]);
    spawned.error = "the fork server did not take the request: " + errorText(sendError);
    return spawned;
  }
  const auto answer = receive(pair[0], kSpawnAnswer);
  const json message = answer ? json::parse(*answer, nullptr, false) : json();
  if (message.is_object() && message.contains("pid") && message["pid"].is_number_integer()) {
    spawned.connection = pair[0];
    spawned.pid = message["pid"].get<pid_t>();
    return spawned;
  }
  ::close(pair[0]);
  if (!answer) {
    spawned.error = "the fork server did not answer";
  } else if (answer->empty()) {
    spawned.error = "the fork server ended";
  } else if (message.is_object() && message.contains("error")) {
    spawned.error = message["error"].dump();
  } else {
    spawned.error = "the child ended before it started: " + *answer;
  }
  return spawned;
}

bool ForkServer::readExit(int connection, int& exitCode, int& termSignal, bool& lost) {
  char buffer[256];
  ssize_t got;
  do {
    got = ::recv(connection, buffer, sizeof buffer, MSG_DONTWAIT);
  } while (got < 0 && errno == EINTR);
  if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
  if (got <= 0) {
    lost = true;
    return true;
  }
  const json message =
      json::parse(std::string(buffer, static_cast<std::size_t>(got)), nullptr, false);
  if (message.is_object() && message.contains("exit") && message["exit"].is_number_integer()) {
    exitCode = message["exit"].get<int>();
  } else if (message.is_object() && message.contains("signal") &&
             message["signal"].is_number_integer()) {
    termSignal = message["signal"].get<int>();
  } else {
    lost = true;
  }
  return true;
}

}  // namespace crucible::proc
