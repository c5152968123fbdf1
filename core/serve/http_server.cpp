#include "core/serve/http_server.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <mutex>
#include <set>
#include <stdexcept>

namespace crucible::serve {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using nlohmann::json;

struct HttpServer::Impl {
  net::io_context io;
  tcp::acceptor acceptor{io};
  HttpHandler handler;
  HttpLimits limits;
  std::atomic<bool> stopping{false};
  std::stop_source stop;
  std::mutex mutex;
  std::condition_variable drained;
  std::set<int> connections;  // native descriptors of open connections
  std::thread acceptor_thread;

  void acceptLoop();
  void serve(tcp::socket socket);
  http::response<http::string_body> respond(const HttpResponse& r, unsigned version,
                                            bool keepAlive);
};

namespace {

HttpResponse errorResponse(int status, const std::string& message) {
  return HttpResponse{status, json{{"error", message}}, {}};
}

void setReceiveTimeout(int fd, std::chrono::seconds timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<long>(timeout.count());
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

}  // namespace

bool isLoopback(const std::string& host) {
  if (host == "localhost") return true;
  boost::system::error_code ec;
  const auto address = net::ip::make_address(host, ec);
  return !ec && address.is_loopback();
}

http::response<http::string_body> HttpServer::Impl::respond(const HttpResponse& r, unsigned version,
                                                            bool keepAlive) {
  http::response<http::string_body> res{static_cast<http::status>(r.status), version};
  res.set(http::field::server, "crucible");
  res.set(http::field::content_type, "application/json");
  for (const auto& [name, value] : r.headers) res.set(name, value);
  res.keep_alive(keepAlive);
  res.body() = r.body.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  res.prepare_payload();
  return res;
}

void HttpServer::Impl::serve(tcp::socket socket) {
  beast::flat_buffer buffer;
  beast::error_code ec;
  setReceiveTimeout(socket.native_handle(), limits.idleTimeout);
  while (!stopping) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(limits.maxBodyBytes);
    parser.header_limit(64 * 1024);
    http::read_header(socket, buffer, parser, ec);
    if (ec) break;  // closed, timed out, or not HTTP
    HttpResponse response;
    bool readBody = true;
    if (parser.content_length() && *parser.content_length() > limits.maxBodyBytes) {
      response = errorResponse(
          413, "the request body is over " + std::to_string(limits.maxBodyBytes) + " bytes");
      readBody = false;
    }
    if (readBody) {
      http::read(socket, buffer, parser, ec);
      if (ec == http::error::body_limit) {
        response = errorResponse(
            413, "the request body is over " + std::to_string(limits.maxBodyBytes) + " bytes");
        readBody = false;
      } else if (ec) {
        break;
      }
    }
    const auto& message = parser.get();
    const bool keepAlive = readBody && message.keep_alive();
    if (readBody) {
      HttpRequest request;
      request.method = std::string(message.method_string());
      request.target = std::string(message.target());
      for (const auto& field : message) {
        std::string name(field.name_string());
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        request.headers[name] = std::string(field.value());
      }
      request.body = message.body();
      try {
        response = handler(request, stop.get_token());
      } catch (const std::exception& e) {
        response = errorResponse(500, std::string("internal error: ") + e.what());
      }
    }
    http::write(socket, respond(response, message.version(), keepAlive), ec);
    if (ec || !keepAlive) break;
  }
  socket.shutdown(tcp::socket::shutdown_both, ec);
}

void HttpServer::Impl::acceptLoop() {
  while (!stopping) {
    tcp::socket socket(io);
    beast::error_code ec;
    acceptor.accept(socket, ec);
    if (ec) {
      if (stopping) return;
      continue;
    }
    std::unique_lock lock(mutex);
    if (static_cast<int>(connections.size()) >= limits.maxConnections) {
      lock.unlock();
      http::write(socket,
                  respond(errorResponse(503, "too many connections; retry later"), 11, false), ec);
      continue;
    }
    const int fd = socket.native_handle();
    connections.insert(fd);
    std::thread([this, fd, s = std::move(socket)]() mutable {
      serve(std::move(s));
      std::lock_guard done(mutex);
      connections.erase(fd);
      drained.notify_all();
    }).detach();
  }
}

HttpServer::HttpServer(const std::string& host, int port, HttpHandler handler, HttpLimits limits)
    : impl_(std::make_unique<Impl>()) {
  impl_->handler = std::move(handler);
  impl_->limits = limits;
  boost::system::error_code ec;
  const auto address = net::ip::make_address(host == "localhost" ? "127.0.0.1" : host, ec);
  if (ec) throw std::runtime_error("'" + host + "' is not an IP address");
  const tcp::endpoint endpoint(address, static_cast<unsigned short>(port));
  impl_->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(endpoint, ec);
  if (!ec) impl_->acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    throw std::runtime_error("cannot listen on " + host + ":" + std::to_string(port) + ": " +
                             ec.message());
  }
  port_ = impl_->acceptor.local_endpoint().port();
  impl_->acceptor_thread = std::thread([impl = impl_.get()] { impl->acceptLoop(); });
}

HttpServer::~HttpServer() {
  impl_->stopping = true;
  impl_->stop.request_stop();
  // shutdown() wakes a thread blocked in accept() or read(); close() alone may not.
  ::shutdown(impl_->acceptor.native_handle(), SHUT_RDWR);
  impl_->acceptor_thread.join();
  std::unique_lock lock(impl_->mutex);
  for (int fd : impl_->connections) ::shutdown(fd, SHUT_RDWR);
  impl_->drained.wait(lock, [&] { return impl_->connections.empty(); });
}

}  // namespace crucible::serve
