// A server handed a socket that already listens (flashps_server_params.listen_fd, API 7: what
// systemd's socket activation passes as fd 3): it serves there, decides whether keys are needed
// from the socket's own address, and refuses what is not a listening TCP socket, naming the fd.
// (tests/http/http_socket_activation.sh runs `flashps serve` under systemd-socket-activate.)
#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstddef>
#include <flashps/flashps.hpp>
#include <fstream>
#include <string>

#include "support/temp_dir.h"
#include "support/tiny_pipeline.h"

using namespace flashps;

namespace {

// A TCP socket bound to host:0; listening unless told not to.
int bound_socket(const char* host, bool listening = true) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  ::inet_pton(AF_INET, host, &address.sin_addr);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  if (listening) REQUIRE(::listen(fd, 16) == 0);
  return fd;
}

int port_of(int fd) {
  sockaddr_in address{};
  socklen_t length = sizeof address;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  return ntohs(address.sin_port);
}

// The start's failure: its status and message ("" when it started).
std::pair<flashps_status, std::string> start_failure(const sdk::Engine& engine, const sdk::ServerOptions& options) {
  try {
    sdk::Server::start(engine, options);
  } catch (const sdk::Error& error) {
    return {error.status(), error.what()};
  }
  return {FLASHPS_OK, ""};
}

}  // namespace

TEST_CASE("HTTP: a server on a socket it was handed (socket activation)", "[http][server]") {
  test::TempDir dir;
  const sdk::Engine engine = sdk::Engine::open(test::tiny_model(dir), sdk::EngineOptions{});

  SECTION("a loopback socket: served there, `listen` ignored, no key needed") {
    const int fd = bound_socket("127.0.0.1");
    sdk::ServerOptions options;
    options.listen = "203.0.113.7:9";  // not this machine's: binding it would fail
    options.listen_fd = fd;
    sdk::Server server = sdk::Server::start(engine, options);
    CHECK(server.port() == port_of(fd));
    httplib::Client client("127.0.0.1", server.port());
    const auto health = client.Get("/healthz");
    REQUIRE(health);
    CHECK(health->status == 200);
    const auto models = client.Get("/v1/models");
    REQUIRE(models);
    CHECK(models->status == 200);
  }

  SECTION("a socket on every interface needs keys, as --listen 0.0.0.0 does") {
    const int fd = bound_socket("0.0.0.0");
    sdk::ServerOptions options;
    options.listen_fd = fd;
    const auto [status, message] = start_failure(engine, options);
    CHECK(status == FLASHPS_INVALID_ARGUMENT);
    CHECK_THAT(message, Catch::Contains("listening on 0.0.0.0:" + std::to_string(port_of(fd)) + " (not loopback) needs API keys"));
    options.api_key_file = dir.file("keys");
    std::ofstream(options.api_key_file) << "listen-socket-test-key-0123456789\n";
    sdk::Server server = sdk::Server::start(engine, options);  // takes the fd over (closes it)
    httplib::Client client("127.0.0.1", server.port());
    const auto models = client.Get("/v1/models");
    REQUIRE(models);
    CHECK(models->status == 401);
  }

  SECTION("what is not a listening TCP socket is refused, naming the fd; a failed start leaves it open") {
    const int not_listening = bound_socket("127.0.0.1", /*listening=*/false);
    sdk::ServerOptions options;
    options.listen_fd = not_listening;
    auto [status, message] = start_failure(engine, options);
    CHECK(status == FLASHPS_INVALID_ARGUMENT);
    CHECK_THAT(message, Catch::Contains("fd " + std::to_string(not_listening) + ") is not a TCP socket that listens"));
    CHECK(::close(not_listening) == 0);  // still open: the caller's

    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    options.listen_fd = pipe_fds[0];
    std::tie(status, message) = start_failure(engine, options);
    CHECK(status == FLASHPS_INVALID_ARGUMENT);
    CHECK_THAT(message, Catch::Contains("fd " + std::to_string(pipe_fds[0]) + ") is not an open socket"));
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);

    options.listen_fd = -1;
    std::tie(status, message) = start_failure(engine, options);
    CHECK(status == FLASHPS_INVALID_ARGUMENT);
    CHECK_THAT(message, Catch::Contains("listen_fd is negative"));
  }

  SECTION("a caller built against API 3 (its struct ends before listen_fd) still binds `listen`") {
    flashps_server_params params = flashps_server_default_params();
    params.struct_size = offsetof(flashps_server_params, listen_fd);
    params.listen = "127.0.0.1:0";
    params.listen_fd = 999;  // past the caller's struct: never read (else "fd 999 is not an open socket")
    flashps_server* server = nullptr;
    REQUIRE(flashps_server_start(engine.get(), &params, &server) == FLASHPS_OK);
    CHECK(flashps_server_port(server) > 0);
    flashps_server_close(server);
  }
}
