// The Idempotency-Key header on the edit routes (sdk/src/http/idempotency_keys.h): a request
// retried with the same key computes once, sequentially or concurrently, on both routes; the
// key with another request is refused (422); keys are per API key; the table is bounded.
#include <httplib.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <flashps/flashps.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "http/base64.h"
#include "http/http_error.h"
#include "http/idempotency_keys.h"
#include "support/openai_edit_server.h"

using namespace flashps;
using nlohmann::json;

namespace {

using test::png_bytes;

struct KeyedServer : test::OpenAiEditServer {
  using OpenAiEditServer::OpenAiEditServer;
  httplib::Result edit(const std::string& idempotency_key, const std::string& prompt = "a kite",
                       const std::string& api_key = "") const {
    httplib::Headers headers;
    if (!idempotency_key.empty()) headers.emplace("Idempotency-Key", idempotency_key);
    if (!api_key.empty()) headers.emplace("Authorization", "Bearer " + api_key);
    return client().Post("/v1/images/edits", headers, form({}, prompt));
  }
};

std::string edit_ids(const httplib::Result& result) {
  REQUIRE(result);
  INFO(result->body.substr(0, 300));
  REQUIRE(result->status == 200);
  return result->get_header_value("X-Flashps-Edit-Ids");
}

}  // namespace

TEST_CASE("HTTP: a request retried with the same Idempotency-Key computes once", "[http][server]") {
  KeyedServer test;
  SECTION("retried after the answer: the same edit and image, marked replayed") {
    const auto first = test.edit("retry-1");
    const auto second = test.edit("\"retry-1\"");  // the draft's structured-field string: the same key
    CHECK(edit_ids(first) == edit_ids(second));
    CHECK(first->get_header_value("Idempotent-Replayed").empty());
    CHECK(second->get_header_value("Idempotent-Replayed") == "true");
    CHECK(json::parse(first->body)["data"] == json::parse(second->body)["data"]);
    CHECK(test.edits_submitted() == 1);
  }
  SECTION("four concurrent duplicates join one edit") {
    std::vector<std::string> ids(4);
    std::vector<std::thread> clients;
    for (size_t i = 0; i < ids.size(); ++i)
      clients.emplace_back([&, i] {
        const auto result = test.edit("together");
        ids[i] = result && result->status == 200 ? result->get_header_value("X-Flashps-Edit-Ids") : "failed";
      });
    for (auto& client : clients) client.join();
    for (const std::string& id : ids) CHECK(id == ids[0]);
    CHECK(ids[0].rfind("edit_", 0) == 0);
    CHECK(test.edits_submitted() == 1);
  }
  SECTION("the native route: the same id, 202 both times") {
    httplib::Client client("127.0.0.1", test.server.port());
    const std::string body = json{{"image", http::base64_encode(test.image)},
                                  {"mask", http::base64_encode(png_bytes(test::box_mask(64, 64, 24, 24, 16)))},
                                  {"steps", 2}}.dump();
    const httplib::Headers headers = {{"Idempotency-Key", "native-1"}};
    const auto first = client.Post("/v1/edits", headers, body, "application/json");
    const auto second = client.Post("/v1/edits", headers, body, "application/json");
    REQUIRE(first);
    REQUIRE(second);
    CHECK(first->status == 202);
    CHECK(second->status == 202);
    CHECK(json::parse(first->body)["id"] == json::parse(second->body)["id"]);
    CHECK(test.edits_submitted() == 1);
  }
  SECTION("without a key, or with another one, each request is its own edit") {
    CHECK(edit_ids(test.edit("")) != edit_ids(test.edit("")));
    CHECK(edit_ids(test.edit("one")) != edit_ids(test.edit("two")));
    CHECK(test.edits_submitted() == 4);
  }
}

TEST_CASE("HTTP: an edit its key started that ended cancelled is not replayed: the key starts it anew",
          "[http][server]") {
  KeyedServer test;
  httplib::Client control = test.client();
  // A long edit with the key, cancelled by DELETE while it runs; tried again with a new key in
  // the rare case it finished before the cancel landed (nothing to judge then).
  for (int attempt = 0; attempt < 3; ++attempt) {
    const httplib::Headers headers = {{"Idempotency-Key", "cancel-me-" + std::to_string(attempt)}};
    const int64_t submitted_before = test.edits_submitted();
    int first_status = 0;
    std::thread client([&] {
      const auto first = test.client().Post("/v1/images/edits", headers, test.form({{"steps", "1000", "", ""}}));
      first_status = first ? first->status : -1;
    });
    std::string id;
    for (int i = 0; i < 600 && id.empty(); ++i) {  // the edit is listed from its submission on
      const auto list = control.Get("/v1/edits");
      for (const auto& edit : list ? json::parse(list->body)["data"] : json::array())
        if (!edit["finished"].get<bool>()) id = edit["id"];
      if (id.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!id.empty()) control.Delete(("/v1/edits/" + id).c_str());
    client.join();
    INFO("the first request's status: " << first_status);
    REQUIRE(!id.empty());
    if (first_status == 200) continue;  // finished before the cancel
    CHECK(first_status == 503);         // the OpenAI route's answer for a cancelled edit

    const auto retried = test.client().Post("/v1/images/edits", headers, test.form({{"steps", "1000", "", ""}}));
    REQUIRE(retried);
    CHECK(retried->status == 200);
    CHECK(retried->get_header_value("X-Flashps-Edit-Ids") != id);
    CHECK(retried->get_header_value("Idempotent-Replayed").empty());
    CHECK(test.edits_submitted() == submitted_before + 2);
    return;
  }
  FAIL("each of 3 long edits finished before its cancel landed");
}

TEST_CASE("HTTP: an Idempotency-Key reused for another request is refused; keys are per API key",
          "[http][server]") {
  const std::string alice = "alice-key-0123456789", bob = "bob-key-0123456789ab";
  KeyedServer test({alice, bob});
  CHECK(edit_ids(test.edit("shared", "a kite", alice)).size() > 0);
  const auto other = test.edit("shared", "a boat", alice);
  REQUIRE(other);
  INFO(other->body);
  CHECK(other->status == 422);
  CHECK(json::parse(other->body)["error"]["param"] == "Idempotency-Key");
  CHECK(test.edits_submitted() == 1);
  // Another API key's "shared" is another key: its own edit, whatever alice sent.
  CHECK(edit_ids(test.edit("shared", "a boat", bob)).size() > 0);
  CHECK(test.edits_submitted() == 2);

  const auto malformed = test.edit(std::string(300, 'k'), "a kite", alice);
  REQUIRE(malformed);
  CHECK(malformed->status == 400);
  CHECK(json::parse(malformed->body)["error"]["param"] == "Idempotency-Key");
}

TEST_CASE("Idempotency keys: the table is bounded in count and age", "[http]") {
  http::IdempotencyKeys keys({/*max_keys=*/3, /*max_age_seconds=*/0.3});
  std::vector<std::shared_ptr<http::EditJob>> alive;
  int submitted = 0;
  const auto submit = [&] {
    alive.push_back(std::make_shared<http::EditJob>("edit_" + std::to_string(++submitted), "png"));
    return std::vector<std::shared_ptr<http::EditJob>>{alive.back()};
  };
  for (int i = 0; i < 5; ++i) CHECK_FALSE(keys.claim("client", "key" + std::to_string(i), 7, submit).replayed);
  CHECK(keys.size() == 3);
  CHECK(keys.claim("client", "key4", 7, submit).replayed);        // among the newest three
  CHECK_FALSE(keys.claim("client", "key0", 7, submit).replayed);  // the oldest was forgotten
  CHECK(submitted == 6);
  CHECK_THROWS_AS(keys.claim("client", "key4", 8, submit), http::HttpError);  // another request
  CHECK(keys.claim("other client", "key4", 8, submit).replayed == false);    // another scope

  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  CHECK_FALSE(keys.claim("client", "key4", 8, submit).replayed);  // expired: a new request
  CHECK(keys.size() == 1);

  // A key whose edit the job table forgot (its last reference gone) starts anew, whatever it was.
  alive.clear();
  CHECK_FALSE(keys.claim("client", "key4", 9, submit).replayed);
}
