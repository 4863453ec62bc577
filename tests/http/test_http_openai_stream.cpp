// stream=true on POST /v1/images/edits (sdk/src/http/openai_stream.h): OpenAI's image edit
// events, partial images from the step previews then the completed image; what a stream cannot
// do here is refused with 400 naming the field, never answered plainly.
#include <httplib.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/image/image.h"
#include "http/base64.h"
#include "support/openai_edit_server.h"

using namespace flashps;
using nlohmann::json;

namespace {

struct ServerSentEvent {
  std::string event;
  json data;
};

// The body as events: "event:" and "data:" lines, a blank line ending each; comments skipped.
std::vector<ServerSentEvent> events_of(const std::string& body) {
  std::vector<ServerSentEvent> events;
  ServerSentEvent current;
  std::string data;
  std::istringstream lines(body);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("event: ", 0) == 0) current.event = line.substr(7);
    if (line.rfind("data: ", 0) == 0) data += line.substr(6);
    if (line.empty() && !data.empty()) {
      current.data = json::parse(data);
      events.push_back(current);
      current = {};
      data.clear();
    }
  }
  return events;
}

Image decoded(const json& event) {
  const auto bytes = http::base64_decode(event["b64_json"].get<std::string>());
  REQUIRE(bytes);
  return decode_image(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size(), "event image");
}

void check_refused(const httplib::Result& result, const std::string& param) {
  REQUIRE(result);
  INFO(result->body);
  CHECK(result->status == 400);
  CHECK(result->get_header_value("Content-Type") == "application/json");
  CHECK(json::parse(result->body)["error"]["param"] == param);
}

}  // namespace

TEST_CASE("HTTP: stream=true answers with OpenAI's image edit events", "[http][server]") {
  test::OpenAiEditServer server;
  httplib::Client client = server.client();

  SECTION("partial_images=2: two partial images, then the completed one") {
    const auto result =
        client.Post("/v1/images/edits", server.form({{"stream", "true", "", ""}, {"partial_images", "2", "", ""}}));
    REQUIRE(result);
    INFO(result->body.substr(0, 400));
    REQUIRE(result->status == 200);
    CHECK(result->get_header_value("Content-Type") == "text/event-stream");
    const auto events = events_of(result->body);
    REQUIRE(events.size() == 3);
    for (int i = 0; i < 2; ++i) {
      CHECK(events[i].event == "image_edit.partial_image");
      CHECK(events[i].data["type"] == "image_edit.partial_image");
      CHECK(events[i].data["partial_image_index"] == i);
      CHECK(decoded(events[i].data).width > 0);  // a preview of the processed region
    }
    const json& completed = events[2].data;
    CHECK(events[2].event == "image_edit.completed");
    CHECK(completed["type"] == "image_edit.completed");
    const Image image = decoded(completed);
    CHECK(image.width == 64);
    CHECK(image.height == 64);
    for (const auto& event : events) {
      CHECK(event.data["size"] == "64x64");
      CHECK(event.data["output_format"] == "png");
      CHECK(event.data["created_at"].is_number_integer());
      CHECK(event.data["quality"].is_string());
      CHECK(event.data["background"].is_string());
    }
    CHECK(completed["usage"]["total_tokens"].is_number_integer());
    CHECK(completed["usage"]["input_tokens_details"]["image_tokens"].is_number_integer());
  }
  SECTION("without partial_images: only the completed image, in the asked format") {
    const auto result =
        client.Post("/v1/images/edits", server.form({{"stream", "true", "", ""}, {"output_format", "jpeg", "", ""}}));
    REQUIRE(result);
    const auto events = events_of(result->body);
    REQUIRE(events.size() == 1);
    CHECK(events[0].data["type"] == "image_edit.completed");
    CHECK(events[0].data["output_format"] == "jpeg");
    CHECK(decoded(events[0].data).width == 64);
  }
  SECTION("an edit that fails after the stream began ends it with an error event") {
    const auto result = client.Post(
        "/v1/images/edits", server.form({{"stream", "true", "", ""}, {"deadline_seconds", "0.001", "", ""}}));
    REQUIRE(result);
    CHECK(result->status == 200);  // sent before the edit ended
    const auto events = events_of(result->body);
    REQUIRE(events.size() == 1);
    CHECK(events[0].event == "error");
    CHECK(events[0].data["error"]["code"] == "deadline_exceeded");
    CHECK(events[0].data["error"]["message"].get<std::string>().size() > 0);
  }
  SECTION("stream=false answers plainly") {
    const auto result = client.Post("/v1/images/edits", server.form({{"stream", "false", "", ""}}));
    REQUIRE(result);
    CHECK(result->status == 200);
    CHECK(json::parse(result->body)["data"].size() == 1);
  }
  SECTION("what a stream cannot do here: 400 naming the field") {
    check_refused(client.Post("/v1/images/edits", server.form({{"stream", "true", "", ""}, {"n", "2", "", ""}})), "n");
    check_refused(client.Post("/v1/images/edits",
                              server.form({{"stream", "true", "", ""}, {"response_format", "url", "", ""}})),
                  "response_format");
    check_refused(client.Post("/v1/images/edits",
                              server.form({{"stream", "true", "", ""}, {"partial_images", "4", "", ""}})),
                  "partial_images");
    check_refused(client.Post("/v1/images/edits", server.form({{"stream", "yes", "", ""}})), "stream");
    httplib::MultipartFormDataItems native = server.form({{"stream", "true", "", ""}});
    native[1].content = test::png_bytes(test::box_mask(64, 64, 24, 24, 16));
    check_refused(client.Post("/v1/edits", native), "stream");
    CHECK(server.edits_submitted() == 0);
  }
}
