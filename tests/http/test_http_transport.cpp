// The server's transport under hostile and careless clients (issue 50), on loopback with an
// in-process server: header floods, huge declared and chunked bodies, slow clients, the
// per-client connection limit, health under edit load, and clients that hang up mid-edit. Each
// bound is the issue's; the deadlines are the server's options, scaled down so each test runs in
// seconds.
#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <flashps/flashps.hpp>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/image/image.h"
#include "core/image/image_encode.h"
#include "http/base64.h"
#include "http/http_server.h"
#include "support/temp_dir.h"
#include "support/tiny_pipeline.h"
#include "support/raw_connection.h"

using namespace flashps;
using nlohmann::json;
using Clock = std::chrono::steady_clock;
using test::RawConnection;

namespace {

constexpr const char* kKey = "transport-test-key-0123456789";

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

int64_t resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  return 0;
}

std::string png_bytes(const Image& image) {
  const std::vector<uint8_t> bytes = encode_image(image, ImageFormat::png, 1, "test image");
  return std::string(bytes.begin(), bytes.end());
}

struct TransportServer {
  test::TempDir dir;
  sdk::Engine engine;
  std::unique_ptr<http::HttpServer> server;

  explicit TransportServer(const std::function<void(http::ServerOptions&)>& configure = {}) {
    sdk::EngineOptions engine_options;
    engine_options.max_queued = 256;
    engine = sdk::Engine::open(test::tiny_model(dir), engine_options);
    http::ServerOptions options;
    options.listen = {"127.0.0.1", 0};
    if (configure) configure(options);
    server = std::make_unique<http::HttpServer>(engine, std::move(options));
  }
  int port() const { return server->port(); }
  httplib::Client client() const {
    httplib::Client client("127.0.0.1", port());
    client.set_read_timeout(120, 0);
    client.set_default_headers({{"Authorization", std::string("Bearer ") + kKey}});
    return client;
  }
  double metric(const std::string& name) const {
    const auto answer = client().Get("/metrics");
    REQUIRE(answer);
    const std::string& text = answer->body;
    const size_t at = text.find("\n" + name + " ");
    REQUIRE(at != std::string::npos);
    return std::stod(text.substr(at + name.size() + 2));
  }
};

// Many small header fields, as fast as the server takes them, until it answers or `total` bytes
// went; returns the answer and how much was sent.
std::pair<std::string, size_t> header_flood(int port, size_t total, size_t field_size) {
  RawConnection connection(port);
  std::string block;
  for (int i = 0; block.size() < 65536; ++i)
    block += "X-Flood-" + std::to_string(i) + ": " + std::string(field_size, 'a') + "\r\n";
  size_t sent = 0;
  if (!connection.send_all("GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n")) return {"", 0};
  while (sent < total && !connection.answered()) {
    if (!connection.send_all(block)) break;
    sent += block.size();
  }
  return {connection.read_until_closed(10), sent};
}

}  // namespace

TEST_CASE("HTTP transport: header floods before authentication are refused within the head budget",
          "[http][transport]") {
  TransportServer test([](http::ServerOptions& options) { options.keys = http::ApiKeys::of({kKey}); });
  const int64_t baseline = resident_bytes();
  const size_t flood = size_t{200} << 20;  // 200 MB of small headers, per connection
  // Two flood with many tiny fields (past the field count first), two with longer ones (past
  // the byte budget first).
  std::vector<std::pair<std::string, size_t>> results(4);
  std::vector<std::thread> clients;
  for (size_t i = 0; i < results.size(); ++i)
    clients.emplace_back([&, i] { results[i] = header_flood(test.port(), flood, i < 2 ? 8 : 2000); });
  for (auto& client : clients) client.join();
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& [answer, sent] = results[i];
    INFO(answer.substr(0, 300));
    CHECK(answer.rfind("HTTP/1.1 431 ", 0) == 0);
    // The message names the limit.
    CHECK(answer.find(i < 2 ? "more than 100 header fields" : "over 65536 bytes") != std::string::npos);
    CHECK(sent < flood / 4);                          // refused early, not after reading it all
  }
  CHECK(resident_bytes() - baseline < int64_t{50} << 20);
  CHECK(test.client().Get("/healthz")->status == 200);
}

TEST_CASE("HTTP transport: a declared huge body gets 413 at once and its connection closes", "[http][transport]") {
  TransportServer test([](http::ServerOptions& options) {
    options.keys = http::ApiKeys::of({kKey});
    options.max_body_bytes = 4 << 20;
  });
  const int64_t baseline = resident_bytes();
  SECTION("Content-Length: 10 GiB") {
    RawConnection connection(test.port());
    const auto start = Clock::now();
    REQUIRE(connection.send_all(std::string("POST /v1/images/edits HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ") +
                                kKey + "\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 10737418240\r\n\r\n"));
    connection.send_all(std::string(1 << 20, 'x'));  // the start of it
    bool closed = false;
    const std::string answer = connection.read_until_closed(5, &closed);
    INFO(answer);
    CHECK(answer.rfind("HTTP/1.1 413 ", 0) == 0);
    CHECK(answer.find("4194304 bytes") != std::string::npos);
    CHECK(closed);
    CHECK(seconds_since(start) < 3);
  }
  SECTION("the same without a key: 401 first, and closed") {
    RawConnection connection(test.port());
    REQUIRE(connection.send_all("POST /v1/images/edits HTTP/1.1\r\nHost: x\r\nContent-Length: 10737418240\r\n\r\n"));
    bool closed = false;
    const std::string answer = connection.read_until_closed(5, &closed);
    CHECK(answer.rfind("HTTP/1.1 401 ", 0) == 0);
    CHECK(closed);
  }
  SECTION("a chunked body counted as it arrives") {
    RawConnection connection(test.port());
    REQUIRE(connection.send_all(std::string("POST /v1/images/edits HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ") +
                                kKey + "\r\nContent-Type: multipart/form-data; boundary=b\r\nTransfer-Encoding: chunked\r\n\r\n"));
    const std::string chunk = "10000\r\n" + std::string(0x10000, 'y') + "\r\n";  // 64 KiB chunks
    size_t sent = 0;
    while (sent < (size_t{64} << 20) && !connection.answered() && connection.send_all(chunk)) sent += 0x10000;
    bool closed = false;
    const std::string answer = connection.read_until_closed(5, &closed);
    INFO(answer.substr(0, 300));
    CHECK(answer.rfind("HTTP/1.1 413 ", 0) == 0);
    CHECK(closed);
    CHECK(sent < (size_t{32} << 20));  // answered near the 4 MiB limit, not after all 64 MiB
  }
  CHECK(resident_bytes() - baseline < int64_t{50} << 20);
}

TEST_CASE("HTTP transport: slow clients cost their connection, not the server", "[http][transport]") {
  // The 64 clients at a byte a second for 30 s against a 10 s head deadline, scaled by
  // 1/5: a 2 s deadline (the server's head_seconds option), 64 clients at a byte per 200 ms for 6 s.
  constexpr double kDeadline = 2.0;
  TransportServer test([&](http::ServerOptions& options) {
    options.transport.head_seconds = kDeadline;
    options.transport.body_seconds = kDeadline;
  });
  const std::string image = png_bytes(test::gradient_image(64, 64));
  const std::string mask = png_bytes(test::box_mask(64, 64, 24, 24, 16));
  const std::string body = json{{"image", http::base64_encode(image)}, {"mask", http::base64_encode(mask)}, {"steps", 4}}.dump();
  httplib::Client client = test.client();
  auto edit_seconds = [&] {
    const auto start = Clock::now();
    const auto submitted = client.Post("/v1/edits", body, "application/json");
    REQUIRE(submitted);
    REQUIRE(submitted->status == 202);
    const std::string id = json::parse(submitted->body)["id"];
    for (;;) {
      const auto status = client.Get(("/v1/edits/" + id).c_str());
      REQUIRE(status);
      if (json::parse(status->body)["finished"].get<bool>()) break;
      REQUIRE(seconds_since(start) < 60);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return seconds_since(start);
  };
  const double alone = edit_seconds();

  std::vector<std::unique_ptr<RawConnection>> slow;
  std::vector<Clock::time_point> opened;
  std::vector<double> closed_after(64, -1);
  for (int i = 0; i < 64; ++i) {
    slow.push_back(std::make_unique<RawConnection>(test.port()));
    opened.push_back(Clock::now());
  }
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    const std::string request = "POST /v1/edits HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
    for (size_t byte = 0; !stop && byte < 30; ++byte) {
      for (size_t i = 0; i < slow.size(); ++i) {
        if (closed_after[i] >= 0) continue;
        if (slow[i]->answered()) {
          closed_after[i] = seconds_since(opened[i]);
          continue;
        }
        ::send(slow[i]->fd, request.data() + std::min(byte, request.size() - 1), 1, MSG_NOSIGNAL);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // all 64 are trickling
  const double beside_slow = edit_seconds();
  trickle.join();
  stop = true;
  INFO("an edit alone " << alone << " s, beside 64 slow clients " << beside_slow << " s");
  CHECK(beside_slow <= alone + 1.0);
  for (size_t i = 0; i < slow.size(); ++i) {
    INFO("slow connection " << i);
    CHECK(closed_after[i] >= kDeadline - 0.3);      // not before its deadline
    CHECK(closed_after[i] <= kDeadline + 1.0);      // and by it, though it kept sending
    const std::string answer = slow[i]->read_until_closed(2);
    CHECK(answer.rfind("HTTP/1.1 408 ", 0) == 0);
  }
}

TEST_CASE("HTTP transport: connections per client address are limited", "[http][transport]") {
  TransportServer test([](http::ServerOptions& options) { options.transport.max_connections_per_client = 4; });
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 4; ++i) held.push_back(std::make_unique<RawConnection>(test.port()));
  for (int i = 0; i < 500 && test.server->stats().connections < 4; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(test.server->stats().connections == 4);
  RawConnection extra(test.port());
  bool closed = false;
  const std::string answer = extra.read_until_closed(5, &closed);
  INFO(answer);
  CHECK(answer.rfind("HTTP/1.1 429 ", 0) == 0);
  CHECK(answer.find("at most 4") != std::string::npos);
  CHECK(closed);
  held.pop_back();  // one closes: a new connection is served again
  for (int i = 0; i < 500 && test.server->stats().connections > 3; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(test.client().Get("/healthz")->status == 200);
}

TEST_CASE("HTTP transport: health and metrics answer within 100 ms at 50 concurrent edits", "[http][transport]") {
  TransportServer test;  // the default 16 workers
  const std::string image = png_bytes(test::gradient_image(64, 64));
  const std::string transparent_mask = [] {
    Image mask(64, 64, 4, 255);
    for (int y = 24; y < 40; ++y)
      for (int x = 24; x < 40; ++x) mask.at(x, y, 3) = 0;
    return png_bytes(mask);
  }();
  // 34 native edits queue in the engine (answered 202 at once).
  httplib::Client client = test.client();
  const std::string white_mask = png_bytes(test::box_mask(64, 64, 24, 24, 16));
  for (int i = 0; i < 34; ++i) {
    const auto submitted = client.Post(
        "/v1/edits",
        json{{"image", http::base64_encode(image)}, {"mask", http::base64_encode(white_mask)}, {"steps", 1000}}.dump(),
        "application/json");
    REQUIRE(submitted);
    REQUIRE(submitted->status == 202);
  }
  // Then 16 blocking OpenAI edits hold every worker.
  std::vector<std::thread> blocking;
  struct CancelAndJoin {  // also when a check fails: the edits end, their clients are joined
    TransportServer& test;
    std::vector<std::thread>& threads;
    ~CancelAndJoin() {
      test.server->drain(0);
      for (auto& thread : threads) thread.join();
    }
  } cancel_and_join{test, blocking};
  for (int i = 0; i < 16; ++i)
    blocking.emplace_back([&] {
      httplib::MultipartFormDataItems form = {{"image", image, "image.png", "image/png"},
                                              {"mask", transparent_mask, "mask.png", "image/png"},
                                              {"prompt", "x", "", ""},
                                              {"steps", "1000", "", ""}};
      test.client().Post("/v1/images/edits", form);
    });
  for (int i = 0; i < 1000 && test.server->stats().queued + test.server->stats().running < 50; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(test.server->stats().queued + test.server->stats().running == 50);
  double slowest = 0;
  for (int i = 0; i < 10; ++i) {
    for (const char* path : {"/healthz", "/metrics"}) {
      const auto start = Clock::now();
      const auto answer = test.client().Get(path);
      slowest = std::max(slowest, seconds_since(start));
      REQUIRE(answer);
      CHECK(answer->status == 200);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(test.server->stats().queued + test.server->stats().running > 0);  // measured under load
  INFO("slowest health/metrics answer " << slowest * 1e3 << " ms");
  CHECK(slowest < 0.1);
}

TEST_CASE("HTTP transport: clients that hang up mid-edit cancel their edits", "[http][transport]") {
  TransportServer test([](http::ServerOptions& options) {
    options.threads = 64;
    options.max_connections = 64;
  });
  const std::string image = png_bytes(test::gradient_image(64, 64));
  const std::string transparent_mask = [] {
    Image mask(64, 64, 4, 255);
    for (int y = 24; y < 40; ++y)
      for (int x = 24; x < 40; ++x) mask.at(x, y, 3) = 0;
    return png_bytes(mask);
  }();
  auto form_request = [&](int steps) {
    const std::string boundary = "transport-test-boundary";
    std::string body;
    auto part = [&](const std::string& name, const std::string& value, const std::string& filename) {
      body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + name + "\"" +
              (filename.empty() ? "" : "; filename=\"" + filename + "\"") + "\r\n\r\n" + value + "\r\n";
    };
    part("image", image, "image.png");
    part("mask", transparent_mask, "mask.png");
    part("prompt", "x", "");
    part("steps", std::to_string(steps), "");
    body += "--" + boundary + "--\r\n";
    return "POST /v1/images/edits HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=" +
           boundary + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  };
  // 20 clients ask for long edits and hang up once their edits run or wait in the queue.
  std::vector<std::unique_ptr<RawConnection>> leaving;
  for (int i = 0; i < 20; ++i) {
    leaving.push_back(std::make_unique<RawConnection>(test.port()));
    REQUIRE(leaving.back()->send_all(form_request(1000)));
  }
  httplib::Client client = test.client();
  auto edits = [&] { return json::parse(client.Get("/v1/edits")->body)["data"]; };
  for (int i = 0; i < 1000 && edits().size() < 20; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::set<std::string> leaving_ids;
  for (const json& edit : edits()) leaving_ids.insert(edit["id"].get<std::string>());
  REQUIRE(leaving_ids.size() == 20);
  auto steps_of_leaving = [&](int* cancelled) {
    int steps = 0;
    for (const json& edit : edits()) {
      if (!leaving_ids.count(edit["id"].get<std::string>())) continue;
      steps += edit["step"].get<int>();
      if (cancelled && edit.value("outcome", "") == "cancelled") ++*cancelled;
    }
    return steps;
  };
  // 30 others stay for short edits meanwhile.
  std::atomic<int> done{0};
  std::vector<std::thread> staying;
  for (int i = 0; i < 30; ++i)
    staying.emplace_back([&] {
      RawConnection connection(test.port());
      if (!connection.send_all(form_request(2))) return;
      if (connection.read_until_closed(120).rfind("HTTP/1.1 200 ", 0) == 0) ++done;
    });
  const int steps_before = steps_of_leaving(nullptr);
  for (auto& connection : leaving) connection->close();
  for (auto& thread : staying) thread.join();
  CHECK(done == 30);
  for (int i = 0; i < 1000 && test.server->stats().queued + test.server->stats().running > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  int cancelled = 0;
  const int steps_after = steps_of_leaving(&cancelled);
  INFO("steps of the 20 hung-up edits: " << steps_before << " before, " << steps_after << " after");
  CHECK(cancelled == 20);
  CHECK(steps_after - steps_before <= 20);
  CHECK(test.metric("flashps_edits_cancelled_client_gone_total") == 20);
}

TEST_CASE("HTTP transport: multipart past the part limit and a repeated mask are refused, naming why",
          "[http][transport]") {
  TransportServer test;
  const std::string image = png_bytes(test::gradient_image(64, 64));
  const std::string mask = png_bytes(test::box_mask(64, 64, 24, 24, 16));
  httplib::MultipartFormDataItems form = {{"image", image, "image.png", "image/png"}, {"prompt", "x", "", ""}};
  for (int i = 0; i < 40; ++i) form.push_back({"extra" + std::to_string(i), "1", "", ""});
  const auto many = test.client().Post("/v1/images/edits", form);
  REQUIRE(many);
  INFO(many->body);
  CHECK(many->status == 400);
  CHECK(json::parse(many->body)["error"]["message"] == "the form has more than 32 parts");

  const httplib::MultipartFormDataItems twice = {{"image", image, "image.png", "image/png"},
                                                 {"mask", mask, "mask.png", "image/png"},
                                                 {"mask", mask, "mask.png", "image/png"},
                                                 {"prompt", "x", "", ""}};
  const auto repeated = test.client().Post("/v1/images/edits", twice);
  REQUIRE(repeated);
  INFO(repeated->body);
  CHECK(repeated->status == 400);
  CHECK(json::parse(repeated->body)["error"]["param"] == "mask");
}

TEST_CASE("HTTP transport: a client that closes its sending side after the request still gets the answer",
          "[http][transport]") {
  TransportServer test;
  const std::string image = png_bytes(test::gradient_image(64, 64));
  const std::string mask = [] {  // OpenAI's convention: alpha 0 marks the region
    Image mask(64, 64, 4, 255);
    for (int y = 24; y < 40; ++y)
      for (int x = 24; x < 40; ++x) mask.at(x, y, 3) = 0;
    return png_bytes(mask);
  }();
  const std::string body = json{{"image", http::base64_encode(image)}, {"mask", http::base64_encode(mask)},
                                {"steps", 50}, {"response_format", "b64_json"}}.dump();
  RawConnection connection(test.port());
  // A blocking edit (it runs for a while: a close noticed meanwhile would cancel it), its last
  // bytes and the close in one segment (corked), so the close is there when the request is.
  int cork = 1;
  ::setsockopt(connection.fd, IPPROTO_TCP, TCP_CORK, &cork, sizeof cork);
  REQUIRE(connection.send_all("POST /v1/images/edits HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                              "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body));
  ::shutdown(connection.fd, SHUT_WR);  // as `printf ... | nc -N` does
  bool closed = false;
  const std::string answer = connection.read_until_closed(60, &closed);
  INFO(answer.substr(0, 400));
  CHECK(answer.rfind("HTTP/1.1 200 ", 0) == 0);
  CHECK(closed);
}
