// The HTTP server end to end on a tiny random model (the logic, not the pictures): a real socket
// on loopback, cpp-httplib's client, every route and the statuses of its errors.
#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <catch2/catch.hpp>
#include <chrono>
#include <flashps/flashps.hpp>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "core/image/image.h"
#include "core/image/image_encode.h"
#include "http/base64.h"
#include "models/random/random_model.h"
#include "support/temp_dir.h"
#include "support/tiny_pipeline.h"

using namespace flashps;
using nlohmann::json;

namespace {

std::string png_bytes(const Image& image) {
  const std::vector<uint8_t> bytes = encode_image(image, ImageFormat::png, 1, "test image");
  return std::string(bytes.begin(), bytes.end());
}

// 64x64 RGB picture and both mask conventions for the same 16x16 square.
struct TestImages {
  std::string image = png_bytes(test::gradient_image(64, 64));
  std::string white_mask = png_bytes(test::box_mask(64, 64, 24, 24, 16));
  std::string transparent_mask = [] {
    Image mask(64, 64, 4, 255);
    for (int y = 24; y < 40; ++y)
      for (int x = 24; x < 40; ++x) mask.at(x, y, 3) = 0;
    return png_bytes(mask);
  }();
};

struct TestServer {
  test::TempDir dir;
  // Declared before the server so they outlive it: httplib logs a request after writing its
  // answer, so a connection thread may still append when the client has read the last reply.
  std::mutex log_mutex;
  std::vector<std::string> log;
  sdk::Engine engine;
  sdk::Server server;

  explicit TestServer(sdk::ServerOptions options = {}, size_t max_queued = 0, bool text_encoders = false) {
    sdk::EngineOptions engine_options;
    engine_options.store = sdk::Store::open({dir.file("store")});
    engine_options.max_queued = max_queued;
    engine = sdk::Engine::open(text_encoders ? text_model() : test::tiny_model(dir), engine_options);
    options.listen = "127.0.0.1:0";
    options.store = engine_options.store;
    options.access_log = [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(log_mutex);
      log.push_back(line);
    };
    server = sdk::Server::start(engine, options);
  }
  // A Flux Fill folder with CLIP and T5 (random weights): it edits from the text prompt.
  std::string text_model() const {
    RandomFluxModelSpec spec = small_fill_model_spec();
    spec.transformer.num_layers = 1;
    spec.transformer.num_single_layers = 1;
    spec.vae_config["block_out_channels"] = {8, 8, 8, 8};
    spec.text_encoders = true;
    spec.max_sequence_length = 16;
    write_random_flux_model(dir.file("text_model"), spec);
    return dir.file("text_model");
  }
  httplib::Client client() const {
    httplib::Client client("127.0.0.1", server.port());
    client.set_read_timeout(120, 0);
    return client;
  }
};

json body_of(const httplib::Result& result) {
  REQUIRE(result);
  return json::parse(result->body);
}

void check_error(const httplib::Result& result, int status, const std::string& param = "") {
  REQUIRE(result);
  INFO(result->body);
  CHECK(result->status == status);
  const json body = json::parse(result->body);
  CHECK(body["error"]["message"].get<std::string>().size() > 0);
  CHECK(body["error"]["type"].is_string());
  if (!param.empty()) CHECK(body["error"]["param"] == param);
}

httplib::MultipartFormDataItems openai_form(const TestImages& images, const std::string& extra_name = "",
                                            const std::string& extra_value = "") {
  httplib::MultipartFormDataItems items = {{"image", images.image, "image.png", "image/png"},
                                           {"mask", images.transparent_mask, "mask.png", "image/png"},
                                           {"prompt", "a kite", "", ""},
                                           {"response_format", "b64_json", "", ""},
                                           {"steps", "2", "", ""}};
  if (!extra_name.empty()) items.push_back({extra_name, extra_value, "", ""});
  return items;
}

std::string native_json(const TestImages& images, int steps, double deadline = 0) {
  json body = {{"image", http::base64_encode(images.image)},
               {"mask", http::base64_encode(images.white_mask)},
               {"steps", steps},
               {"seed", 3}};
  if (deadline > 0) body["deadline_seconds"] = deadline;
  return body.dump();
}

json wait_finished(httplib::Client& client, const std::string& id) {
  for (int i = 0; i < 1200; ++i) {
    const json status = body_of(client.Get(("/v1/edits/" + id).c_str()));
    if (status["finished"].get<bool>()) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  FAIL("edit " << id << " did not finish within 60 s");
  return {};
}

}  // namespace

TEST_CASE("HTTP: the OpenAI-compatible edit answers in that API's shape", "[http][server]") {
  TestServer test;
  const TestImages images;
  httplib::Client client = test.client();

  const auto result = client.Post("/v1/images/edits", openai_form(images));
  REQUIRE(result);
  INFO(result->body);
  REQUIRE(result->status == 200);
  const json body = json::parse(result->body);
  CHECK(body["created"].is_number_integer());
  CHECK(body["model"] == "model");  // the folder's name
  REQUIRE(body["data"].size() == 1);
  const auto png = http::base64_decode(body["data"][0]["b64_json"].get<std::string>());
  REQUIRE(png);
  const Image edited = decode_image(reinterpret_cast<const uint8_t*>(png->data()), png->size(), "answer");
  CHECK(edited.width == 64);
  CHECK(edited.height == 64);
  // Every phase of the server's part of the latency, in the order they happen, each a duration.
  const std::string timing = result->get_header_value("Server-Timing");
  CHECK_THAT(timing, Catch::Contains("edit;dur="));
  std::vector<std::string> phases;
  for (size_t at = 0; at < timing.size();) {
    const size_t duration = timing.find(";dur=", at);
    REQUIRE(duration != std::string::npos);
    phases.push_back(timing.substr(at, duration - at));
    char* end = nullptr;
    const double milliseconds = std::strtod(timing.c_str() + duration + 5, &end);
    CHECK(end != timing.c_str() + duration + 5);
    CHECK(milliseconds >= 0);
    at = timing.find_first_not_of(", ", static_cast<size_t>(end - timing.c_str()));
  }
  CHECK(phases ==
        std::vector<std::string>{"wait", "headers", "receive", "decode", "edit", "finish", "encode", "answer"});
  CHECK(result->get_header_value("X-Request-Id").rfind("req_", 0) == 0);

  SECTION("n images, each its own seed; url answers point at the native result") {
    auto form = openai_form(images, "n", "2");
    form[3].content = "url";
    const json two = body_of(client.Post("/v1/images/edits", form));
    REQUIRE(two["data"].size() == 2);
    const std::string url = two["data"][1]["url"];
    const std::string path = url.substr(url.find("/v1/"));
    const auto fetched = client.Get(path.c_str());
    REQUIRE(fetched);
    CHECK(fetched->status == 200);
    CHECK(fetched->get_header_value("Content-Type") == "image/png");
  }
  SECTION("errors: n over the limit, another size, a mask without alpha, no image, wrong content type") {
    check_error(client.Post("/v1/images/edits", openai_form(images, "n", "99")), 422, "n");
    check_error(client.Post("/v1/images/edits", openai_form(images, "size", "1024x1024")), 422, "size");
    auto form = openai_form(images);
    form[1].content = images.white_mask;
    check_error(client.Post("/v1/images/edits", form), 400, "mask");
    form = openai_form(images);
    form.erase(form.begin());
    check_error(client.Post("/v1/images/edits", form), 400, "image");
    check_error(client.Post("/v1/images/edits", "hello", "text/plain"), 415);
    form = openai_form(images);
    form[0].content = images.image.substr(0, images.image.size() / 2);
    check_error(client.Post("/v1/images/edits", form), 400, "image");
  }
  SECTION("models list") {
    const json models = body_of(client.Get("/v1/models"));
    CHECK(models["object"] == "list");
    CHECK(models["data"][0]["id"] == "model");
  }
}

TEST_CASE("HTTP: native edits — submit, status, events in order, result, cancel, deadline", "[http][server]") {
  TestServer test;
  const TestImages images;
  httplib::Client client = test.client();

  const auto submitted = client.Post("/v1/edits", native_json(images, 3), "application/json");
  REQUIRE(submitted);
  INFO(submitted->body);
  REQUIRE(submitted->status == 202);
  const json accepted = json::parse(submitted->body);
  const std::string id = accepted["id"];
  CHECK(submitted->get_header_value("Location") == "/v1/edits/" + id);

  SECTION("events arrive in order and end with the finished edit; the result is the image") {
    std::string stream;
    const auto events = client.Get(("/v1/edits/" + id + "/events").c_str(),
                                   [&](const char* data, size_t length) {
                                     stream.append(data, length);
                                     return true;
                                   });
    REQUIRE(events);
    CHECK(events->get_header_value("Content-Type") == "text/event-stream");
    std::vector<json> data;
    std::vector<std::string> names;
    for (size_t at = 0; (at = stream.find("event: ", at)) != std::string::npos;) {
      const size_t end = stream.find('\n', at);
      names.push_back(stream.substr(at + 7, end - at - 7));
      const size_t data_at = stream.find("data: ", end);
      data.push_back(json::parse(stream.substr(data_at + 6, stream.find('\n', data_at) - data_at - 6)));
      at = data_at;
    }
    REQUIRE(names.size() >= 2);
    CHECK(names.back() == "done");
    CHECK(data.back()["finished"] == true);
    CHECK(data.back()["steps"] == 3);
    for (size_t i = 0; i + 1 < names.size(); ++i) {
      CHECK(names[i] != "done");
      CHECK(data[i]["step"].get<int>() <= data[i + 1]["step"].get<int>());
    }
    const auto result = client.Get(("/v1/edits/" + id + "/result").c_str());
    REQUIRE(result);
    CHECK(result->status == 200);
    const Image edited = decode_image(reinterpret_cast<const uint8_t*>(result->body.data()), result->body.size(), "result");
    CHECK(edited.width == 64);
    const json listed = body_of(client.Get("/v1/edits"));
    CHECK(listed["data"].size() >= 1);
  }
  SECTION("cancel mid-edit: the edit ends cancelled, its result is 409") {
    const json slow = body_of(client.Post("/v1/edits", native_json(images, 400), "application/json"));
    const std::string slow_id = slow["id"];
    for (int i = 0; i < 600; ++i) {  // until it denoises
      if (body_of(client.Get(("/v1/edits/" + slow_id).c_str()))["step"].get<int>() >= 1) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const json cancelled = body_of(client.Delete(("/v1/edits/" + slow_id).c_str()));
    CHECK(cancelled["id"] == slow_id);
    const json final_state = wait_finished(client, slow_id);
    CHECK(final_state["outcome"] == "cancelled");
    CHECK(final_state["status"] == "cancelled");
    CHECK(final_state["step"].get<int>() < 400);
    check_error(client.Get(("/v1/edits/" + slow_id + "/result").c_str()), 409);
  }
  SECTION("a deadline ends the edit as deadline_exceeded; its result is 504") {
    const json late = body_of(client.Post("/v1/edits", native_json(images, 400, 0.05), "application/json"));
    const json final_state = wait_finished(client, late["id"]);
    CHECK(final_state["outcome"] == "deadline_exceeded");
    check_error(client.Get(("/v1/edits/" + late["id"].get<std::string>() + "/result").c_str()), 504);
  }
  SECTION("unknown edits are 404; a result before the end is 409") {
    check_error(client.Get("/v1/edits/edit_0000000000000000"), 404);
    check_error(client.Delete("/v1/edits/edit_0000000000000000"), 404);
    const json slow = body_of(client.Post("/v1/edits", native_json(images, 400), "application/json"));
    check_error(client.Get(("/v1/edits/" + slow["id"].get<std::string>() + "/result").c_str()), 409);
    client.Delete(("/v1/edits/" + slow["id"].get<std::string>()).c_str());
  }
  SECTION("the native API takes multipart too, and needs a mask") {
    httplib::MultipartFormDataItems form = {{"image", images.image, "a.png", "image/png"},
                                            {"mask", images.white_mask, "m.png", "image/png"},
                                            {"steps", "1", "", ""}};
    const auto multipart = client.Post("/v1/edits", form);
    REQUIRE(multipart);
    CHECK(multipart->status == 202);
    form.pop_back();
    form.pop_back();
    check_error(client.Post("/v1/edits", form), 400, "mask");
  }
  wait_finished(client, id);
}

TEST_CASE("HTTP: templates, health, readiness, metrics and the access log", "[http][server]") {
  TestServer test;
  const TestImages images;
  httplib::Client client = test.client();

  const json registered = body_of(client.Post(
      "/v1/templates", json{{"image", http::base64_encode(images.image)}, {"steps", 2}}.dump(), "application/json"));
  INFO(registered.dump());
  const std::string hash = registered["template_hash"];
  CHECK(hash.size() >= 8);
  const json listed = body_of(client.Get("/v1/templates"));
  REQUIRE(listed["data"].size() == 1);
  CHECK(listed["data"][0]["template_hash"] == hash);

  // An edit of the registered template reuses its capture: a cache hit in stats and metrics.
  const json edit = body_of(client.Post("/v1/edits", native_json(images, 2), "application/json"));
  const json finished = wait_finished(client, edit["id"]);
  CHECK(finished["outcome"] == "done");
  CHECK(finished["stats"]["cache_hit"] == true);
  const auto metrics = client.Get("/metrics");
  REQUIRE(metrics);
  CHECK_THAT(metrics->get_header_value("Content-Type"), Catch::StartsWith("text/plain; version=0.0.4"));
  CHECK_THAT(metrics->body, Catch::Contains("flashps_cache_hits_total 1\n"));
  CHECK_THAT(metrics->body, Catch::Contains("flashps_edits_total{outcome=\"done\"} 1\n"));
  CHECK_THAT(metrics->body, Catch::Contains("flashps_running_batch_size 0\n"));
  // Step latency is measured between step events: a 2-step edit gives one or two samples, as its
  // first step's start may or may not come as an event of its own.
  CHECK_THAT(metrics->body, Catch::Contains("flashps_step_seconds_count ") &&
                                !Catch::Contains("flashps_step_seconds_count 0\n"));

  CHECK(body_of(client.Delete(("/v1/templates/" + hash.substr(0, 8)).c_str()))["removed"] == 1);
  CHECK(body_of(client.Get("/v1/templates"))["data"].empty());
  CHECK(body_of(client.Get("/healthz"))["status"] == "ok");
  CHECK(body_of(client.Get("/readyz"))["status"] == "ready");
  check_error(client.Get("/no/such/route"), 404);

  std::lock_guard<std::mutex> lock(test.log_mutex);
  REQUIRE(test.log.size() >= 8);
  for (const std::string& line : test.log) {
    const json entry = json::parse(line);
    CHECK(entry["request_id"].get<std::string>().size() > 4);
    CHECK(entry["status"].is_number_integer());
    CHECK(line.find(http::base64_encode(images.image).substr(0, 40)) == std::string::npos);  // never image bytes
  }
}

TEST_CASE("HTTP: API keys, body and pixel limits, a full queue, draining", "[http][server]") {
  test::TempDir keys_dir;
  {
    std::ofstream(keys_dir.file("keys")) << "server-key-0123456789abcdef\n";
  }
  sdk::ServerOptions options;
  options.api_key_file = keys_dir.file("keys");
  options.max_body_bytes = 200000;
  options.max_pixels = 64 * 64;
  TestServer test(options, /*max_queued=*/1);
  const TestImages images;
  httplib::Client client = test.client();

  const auto no_key = client.Get("/v1/models");
  check_error(no_key, 401);
  CHECK(no_key->get_header_value("WWW-Authenticate") == "Bearer");
  client.set_bearer_token_auth("wrong-key-0123456789abcdef");
  check_error(client.Get("/v1/models"), 401);
  CHECK(client.Get("/healthz")->status == 200);  // probes need no key
  client.set_bearer_token_auth("server-key-0123456789abcdef");
  CHECK(client.Get("/v1/models")->status == 200);

  check_error(client.Post("/v1/edits", std::string(300000, 'x'), "application/json"), 413);
  const std::string big = png_bytes(test::gradient_image(65, 64));  // one column over the pixel limit
  json over = json::parse(native_json(images, 1));
  over["image"] = http::base64_encode(big);
  check_error(client.Post("/v1/edits", over.dump(), "application/json"), 413, "image");

  // Queue of one: while it is taken, further edits are 429 with Retry-After.
  std::vector<std::string> ids;
  bool saw_429 = false;
  for (int i = 0; i < 6 && !saw_429; ++i) {
    const auto result = client.Post("/v1/edits", native_json(images, 300), "application/json");
    REQUIRE(result);
    if (result->status == 202) ids.push_back(json::parse(result->body)["id"]);
    if (result->status == 429) {
      saw_429 = true;
      CHECK(result->get_header_value("Retry-After") == "1");
      check_error(result, 429);
    }
  }
  CHECK(saw_429);

  // Draining: new edits 503, readiness 503; what ran is cancelled after the wait.
  std::thread drain([&] { CHECK(test.server.drain(0.2) >= 1); });
  // Waits for the drain to begin (a fixed sleep lost that race on a loaded machine).
  for (int i = 0; i < 500 && client.Get("/readyz")->status != 503; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(client.Get("/readyz")->status == 503);
  check_error(client.Post("/v1/edits", native_json(images, 1), "application/json"), 503);
  drain.join();
  for (const std::string& id : ids) CHECK(wait_finished(client, id)["finished"] == true);
}

TEST_CASE("HTTP: a non-loopback address needs keys; a taken port names itself", "[http][server]") {
  test::TempDir dir;
  const sdk::Engine engine = sdk::Engine::open(test::tiny_model(dir));
  sdk::ServerOptions options;
  options.listen = "0.0.0.0:0";
  CHECK_THROWS_WITH(sdk::Server::start(engine, options), Catch::Contains("--api-key-file"));
  options.listen = "127.0.0.1:0";
  const sdk::Server first = sdk::Server::start(engine, options);
  options.listen = "127.0.0.1:" + std::to_string(first.port());
  try {
    sdk::Server::start(engine, options);
    FAIL("a second server bound the same port");
  } catch (const sdk::Error& error) {
    CHECK(error.status() == FLASHPS_IO_ERROR);
    CHECK_THAT(error.what(), Catch::Contains(options.listen));
  }
}

TEST_CASE("HTTP: requests over the worker cap get 503 at once; health still answers", "[http][server]") {
  sdk::ServerOptions options;
  options.threads = 2;  // and so at most 2 requests served at once
  TestServer test(options);
  const TestImages images;
  httplib::Client client = test.client();
  // Two event streams of long edits hold both workers (a slow upload no longer holds one: the
  // transport reads bodies without a worker).
  std::vector<std::string> ids;
  for (int i = 0; i < 2; ++i) {
    const auto submitted = client.Post("/v1/edits", native_json(images, 1000), "application/json");
    REQUIRE(submitted);
    REQUIRE(submitted->status == 202);
    ids.push_back(json::parse(submitted->body)["id"]);
  }
  std::atomic<int> events{0};
  std::vector<std::thread> streams;
  for (const std::string& id : ids)
    streams.emplace_back([&, id] {
      test.client().Get(("/v1/edits/" + id + "/events").c_str(), [&](const char*, size_t) {
        ++events;
        return true;
      });
    });
  for (int i = 0; i < 1000 && events < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(events >= 2);
  check_error(test.client().Get("/v1/models"), 503);
  CHECK(test.client().Get("/healthz")->status == 200);  // its own workers
  CHECK(test.client().Get("/metrics")->status == 200);
  for (auto& stream : streams) stream.join();  // they end with their edits
  CHECK(test.client().Get("/v1/models")->status == 200);
}

TEST_CASE("HTTP: a Flux folder with text encoders edits from the prompt; a repeated prompt runs no encoder",
          "[http][server][t5]") {
  TestServer test({}, 0, /*text_encoders=*/true);
  const TestImages images;
  httplib::Client client = test.client();
  const json models = body_of(client.Get("/v1/models"));
  REQUIRE(models["data"].size() == 1);
  std::vector<json> finished;
  for (int i = 0; i < 2; ++i) {
    json body = json::parse(native_json(images, 2));
    body["prompt"] = "a red kite in the sky";
    const auto submitted = client.Post("/v1/edits", body.dump(), "application/json");
    REQUIRE(submitted);
    INFO(submitted->body);
    REQUIRE(submitted->status == 202);
    finished.push_back(wait_finished(client, json::parse(submitted->body)["id"]));
    INFO(finished.back().dump());
    REQUIRE(finished.back()["outcome"] == "done");
  }
  CHECK(finished[0]["stats"]["prompt_cache_hit"] == false);
  CHECK(finished[1]["stats"]["prompt_cache_hit"] == true);
  CHECK_THAT(finished[1]["stats"]["notes"].dump(), Catch::Contains("reused from the store"));
  // The OpenAI endpoint takes the same prompt, with a T5 length from the native field set.
  const auto openai = client.Post("/v1/images/edits", openai_form(images, "max_sequence_length", "8"));
  REQUIRE(openai);
  CHECK(openai->status == 200);
}
