// Work for a client that went away stops on every route that runs one (issue 43), and a drain
// (SIGTERM in `flashps serve`) treats template captures as it treats edits. On one engine worker
// that denoises one edit at a time (max_batch 1), so "frees the worker" is visible: the next
// client's edit runs. The server is in-process (http::HttpServer) on a free loopback port.
#include <httplib.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <flashps/flashps.hpp>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "core/image/image.h"
#include "core/image/image_encode.h"
#include "http/base64.h"
#include "http/http_server.h"
#include "support/raw_connection.h"
#include "support/temp_dir.h"
#include "support/tiny_pipeline.h"

using namespace flashps;
using nlohmann::json;
using test::RawConnection;

namespace {

// Large enough that a step of the tiny model takes longer than a loopback round trip, so the
// step a test reads just before it hangs up is (at most) the one running when it does.
constexpr int kSide = 256;

std::string png_bytes(const Image& image) {
  const std::vector<uint8_t> bytes = encode_image(image, ImageFormat::png, 1, "test image");
  return std::string(bytes.begin(), bytes.end());
}

bool wait_until(const std::function<bool()>& condition, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return condition();
}

struct OneWorkerServer {
  test::TempDir dir;
  sdk::Store store;
  sdk::Engine engine;
  std::unique_ptr<http::HttpServer> server;
  const std::string image = png_bytes(test::gradient_image(kSide, kSide));
  const std::string white_mask = png_bytes(test::box_mask(kSide, kSide, kSide / 4, kSide / 4, kSide / 4));
  const std::string transparent_mask = [] {
    Image mask(kSide, kSide, 4, 255);
    for (int y = kSide / 4; y < kSide / 2; ++y)
      for (int x = kSide / 4; x < kSide / 2; ++x) mask.at(x, y, 3) = 0;
    return png_bytes(mask);
  }();

  explicit OneWorkerServer(int threads = 4) {
    store = sdk::Store::open({dir.file("store")});
    sdk::EngineOptions engine_options;
    engine_options.max_batch = 1;
    engine_options.store = store;
    engine = sdk::Engine::open(test::tiny_model(dir), engine_options);
    http::ServerOptions options;
    options.listen = {"127.0.0.1", 0};
    options.threads = threads;
    options.max_connections = 4;
    options.store = store.get();
    server = std::make_unique<http::HttpServer>(engine, std::move(options));
  }
  int port() const { return server->port(); }
  httplib::Client client() const {
    httplib::Client client("127.0.0.1", port());
    client.set_read_timeout(120, 0);
    return client;
  }
  double metric(const std::string& name) const {
    const auto answer = client().Get("/metrics");
    REQUIRE(answer);
    const size_t at = answer->body.find("\n" + name + " ");
    REQUIRE(at != std::string::npos);
    return std::stod(answer->body.substr(at + name.size() + 2));
  }
  json edits() const {
    const auto answer = client().Get("/v1/edits");
    REQUIRE(answer);
    return json::parse(answer->body)["data"];
  }
  json edit(const std::string& id) const {
    const auto answer = client().Get(("/v1/edits/" + id).c_str());
    REQUIRE(answer);
    return json::parse(answer->body);
  }
  std::string openai_request(int steps, bool stream) const {
    return test::multipart_post("/v1/images/edits", {{"image", image, "image.png"},
                                                     {"mask", transparent_mask, "mask.png"},
                                                     {"prompt", "x", ""},
                                                     {"stream", stream ? "true" : "false", ""},
                                                     {"steps", std::to_string(steps), ""}});
  }
  std::string template_request(int steps) const {
    return test::multipart_post("/v1/templates", {{"image", image, "image.png"},
                                                  {"mask", white_mask, "mask.png"},
                                                  {"steps", std::to_string(steps), ""}});
  }
  // A short OpenAI edit by a client that stays: its status (200 once it had the worker).
  int short_edit() const {
    httplib::Client other = client();
    const auto answer = other.Post("/v1/images/edits",
                                   httplib::MultipartFormDataItems{{"image", image, "image.png", "image/png"},
                                                                   {"mask", transparent_mask, "mask.png", "image/png"},
                                                                   {"prompt", "x", "", ""},
                                                                   {"steps", "2", "", ""}});
    return answer ? answer->status : -1;
  }
};

}  // namespace

TEST_CASE("HTTP: a client gone mid-edit on the OpenAI route frees the single worker within one step",
          "[http][transport]") {
  for (const bool stream : {false, true}) {
    INFO("stream=" << stream);
    OneWorkerServer test;
    RawConnection leaving(test.port());
    REQUIRE(leaving.send_all(test.openai_request(1000, stream)));
    std::string id;
    REQUIRE(wait_until([&] {
      const json list = test.edits();
      if (list.empty() || list[0]["step"].get<int>() < 1) return false;
      id = list[0]["id"];
      return true;
    }, 60));
    const int step_before = test.edit(id)["step"];
    leaving.close();
    // The next client's edit gets the worker (queued behind the gone one until it stops).
    CHECK(test.short_edit() == 200);
    const json gone = test.edit(id);
    INFO("the gone client's edit: step " << step_before << " when it hung up, " << gone["step"] << " at the end");
    CHECK(gone.value("outcome", "") == "cancelled");
    CHECK(gone["step"].get<int>() <= step_before + 1);
    CHECK(test.metric("flashps_edits_cancelled_client_gone_total") == 1);
  }
}

TEST_CASE("HTTP: a template capture whose client disconnects is cancelled, and nothing is captured",
          "[http][transport]") {
  OneWorkerServer test;
  RawConnection leaving(test.port());
  REQUIRE(leaving.send_all(test.template_request(1000)));
  REQUIRE(wait_until([&] { return test.metric("flashps_template_captures_running") == 1; }, 60));
  leaving.close();
  // A 1000-step capture would hold the engine (it pauses edits) far longer than this.
  REQUIRE(wait_until([&] { return test.metric("flashps_template_captures_running") == 0; }, 60));
  CHECK(test.metric("flashps_edits_cancelled_client_gone_total") == 1);
  const auto listed = test.client().Get("/v1/templates");
  REQUIRE(listed);
  CHECK(json::parse(listed->body)["data"].empty());
  CHECK(test.short_edit() == 200);  // the engine runs edits again
}

TEST_CASE("HTTP: a native edit whose 202 cannot be written (its client went away) is cancelled",
          "[http][transport]") {
  OneWorkerServer test(/*threads=*/1);  // one HTTP worker: the second request waits for it
  RawConnection holding(test.port());
  REQUIRE(holding.send_all(test.openai_request(1000, false)));
  // (Only /metrics answers meanwhile: it has workers of its own; /v1/edits waits for the one.)
  REQUIRE(wait_until([&] {
    return test.metric("flashps_queue_depth") + test.metric("flashps_running_batch_size") == 1;
  }, 60));
  RawConnection leaving(test.port());
  const std::string body = json{{"image", http::base64_encode(test.image)},
                                {"mask", http::base64_encode(test.white_mask)},
                                {"steps", 1000}}.dump();
  REQUIRE(leaving.send_all("POST /v1/edits HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body));
  // Handed to the worker pool (waiting behind the first): only then is its hang-up watched.
  REQUIRE(wait_until([&] { return test.metric("flashps_http_requests_in_progress") == 2; }, 60));
  leaving.close();
  holding.close();  // the first edit stops; the worker takes the native request of a gone client
  REQUIRE(wait_until([&] { return test.edits().size() == 2; }, 60));
  const std::string native_id = test.edits()[0]["id"];  // the most recent first
  REQUIRE(wait_until([&] { return test.edit(native_id)["finished"].get<bool>(); }, 60));
  CHECK(test.edit(native_id).value("outcome", "") == "cancelled");
  CHECK(test.edit(native_id)["step"].get<int>() <= 1);
  CHECK(test.metric("flashps_edits_cancelled_client_gone_total") == 2);
}

TEST_CASE("HTTP: a drain lets a template capture in flight finish and answer, and new work gets 503",
          "[http][transport]") {
  OneWorkerServer test;
  RawConnection capturing(test.port());
  REQUIRE(capturing.send_all(test.template_request(30)));
  REQUIRE(wait_until([&] { return test.metric("flashps_template_captures_running") == 1; }, 60));
  int cancelled = -1;
  std::thread drain([&] { cancelled = test.server->drain(300); });
  REQUIRE(wait_until([&] { return test.client().Get("/readyz")->status == 503; }, 60));
  RawConnection late(test.port());
  REQUIRE(late.send_all(test.template_request(2)));
  CHECK(late.read_until_closed(60).rfind("HTTP/1.1 503 ", 0) == 0);
  drain.join();
  test.server->close();  // what `flashps serve` does once drained: the answer was written before
  const std::string answer = capturing.read_until_closed(60);
  INFO(answer.substr(0, 400));
  CHECK(answer.rfind("HTTP/1.1 201 ", 0) == 0);
  CHECK(answer.find("\"template_hash\"") != std::string::npos);
  CHECK(cancelled == 0);
}

TEST_CASE("HTTP: a drain out of time cancels a template capture, whose client gets 503", "[http][transport]") {
  OneWorkerServer test;
  RawConnection capturing(test.port());
  REQUIRE(capturing.send_all(test.template_request(1000)));
  REQUIRE(wait_until([&] { return test.metric("flashps_template_captures_running") == 1; }, 60));
  CHECK(test.server->drain(0.2) == 1);
  test.server->close();
  const std::string answer = capturing.read_until_closed(60);
  INFO(answer.substr(0, 400));
  CHECK(answer.rfind("HTTP/1.1 503 ", 0) == 0);
}
