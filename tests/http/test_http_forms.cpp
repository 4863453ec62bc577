// The HTTP server's request parsing, keys and addresses (sdk/src/http/), without a server.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>

#include "core/image/image.h"
#include "core/image/image_encode.h"
#include "http/api_keys.h"
#include "http/base64.h"
#include "http/edit_form.h"
#include "http/http_error.h"
#include "http/listen_address.h"
#include "http/server_metrics.h"
#include "support/temp_dir.h"

#include <fstream>

using namespace flashps;
using namespace flashps::http;

namespace {

std::string png_bytes(const Image& image) {
  const std::vector<uint8_t> bytes = encode_image(image, ImageFormat::png, 1, "test image");
  return std::string(bytes.begin(), bytes.end());
}

Image rgba_with_hole(int width, int height) {
  Image image(width, height, 4, 200);
  for (int y = 2; y < 6; ++y)
    for (int x = 1; x < 4; ++x) image.at(x, y, 3) = 0;  // fully transparent: edit here
  image.at(0, 0, 3) = 1;                                // almost transparent: kept
  return image;
}

int status_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const HttpError& error) {
    return error.status();
  }
  return 0;
}

}  // namespace

TEST_CASE("base64 round-trips every length and refuses malformed text", "[http]") {
  std::string bytes;
  for (int length = 0; length < 70; ++length) {
    const std::string encoded = base64_encode(bytes);
    CHECK(encoded.size() == (bytes.size() + 2) / 3 * 4);
    const auto decoded = base64_decode(encoded);
    REQUIRE(decoded);
    CHECK(*decoded == bytes);
    bytes += static_cast<char>(length * 37 + 11);
  }
  // RFC 4648's test vectors, so the encoder is checked against the standard, not only its decoder.
  const std::pair<const char*, const char*> vectors[] = {{"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"}, {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) CHECK(base64_encode(plain) == encoded);
  CHECK(base64_encode(std::string("\xff\xfe\xfd\x00\x01", 5)) == "//79AAE=");  // the last two alphabet characters
  std::string answer = "{\"b64_json\":\"";
  base64_append(answer, "foobar");
  CHECK(answer == "{\"b64_json\":\"Zm9vYmFy");  // appended after what was there
  CHECK(base64_decode("aGVsbG8=").value() == "hello");
  CHECK(base64_decode("aGVs\r\nbG8").value() == "hello");                    // wrapped, unpadded
  CHECK(base64_decode("data:image/png;base64,aGVsbG8=").value() == "hello");  // a data URL
  CHECK_FALSE(base64_decode("aGVs*G8="));
  CHECK_FALSE(base64_decode("aGVsbG8=x"));   // data after padding
  CHECK_FALSE(base64_decode("a"));           // a lone final character
  CHECK_FALSE(base64_decode("data:image/png,aGVsbG8="));  // not base64 data
}

TEST_CASE("API keys: bearer scheme, every key, constant-time compare, file errors", "[http]") {
  const ApiKeys keys = ApiKeys::of({"first-key-0123456789", "second-key-0123456789"});
  CHECK(keys.accepts("Bearer first-key-0123456789"));
  CHECK(keys.accepts("Bearer second-key-0123456789"));
  CHECK_FALSE(keys.accepts("Bearer first-key-012345678"));   // a prefix
  CHECK_FALSE(keys.accepts("Bearer first-key-01234567890"));  // longer
  CHECK_FALSE(keys.accepts("first-key-0123456789"));          // no scheme
  CHECK_FALSE(keys.accepts("Basic first-key-0123456789"));
  CHECK_FALSE(keys.accepts(""));
  CHECK(constant_time_equal("abc", "abc"));
  CHECK_FALSE(constant_time_equal("abc", "abd"));
  CHECK_FALSE(constant_time_equal("abc", "abcd"));
  CHECK_FALSE(constant_time_equal("", "a"));

  test::TempDir dir;
  const auto write = [&](const std::string& text) {
    std::ofstream(dir.file("keys")) << text;
    return dir.file("keys");
  };
  CHECK(ApiKeys::load(write("# ops keys\n\n  key-from-file-0123456789  \r\n")).accepts("Bearer key-from-file-0123456789"));
  CHECK_THROWS_WITH(ApiKeys::load(write("# none\n")), Catch::Contains("holds no key"));
  CHECK_THROWS_WITH(ApiKeys::load(write("short\n")), Catch::Contains(":1: an API key must have at least 16"));
  CHECK_THROWS_WITH(ApiKeys::load(dir.file("missing")), Catch::Contains("missing: API key file not found"));
}

TEST_CASE("listen addresses: forms, loopback, errors", "[http]") {
  CHECK(parse_listen_address("127.0.0.1:8188").loopback());
  CHECK(parse_listen_address("127.1.2.3:0").loopback());
  CHECK(parse_listen_address("localhost:80").loopback());
  CHECK(parse_listen_address("[::1]:8188").loopback());
  CHECK(parse_listen_address("[::1]:8188").host == "::1");
  CHECK(parse_listen_address("[::1]:8188").text() == "[::1]:8188");
  CHECK_FALSE(parse_listen_address("0.0.0.0:8188").loopback());
  CHECK_FALSE(parse_listen_address(":8188").loopback());  // all interfaces
  CHECK_FALSE(parse_listen_address("[::]:8188").loopback());
  CHECK_FALSE(parse_listen_address("192.168.1.5:8188").loopback());
  CHECK_FALSE(parse_listen_address("example.com:8188").loopback());
  CHECK(parse_listen_address("127.0.0.1:0").port == 0);
  for (const char* bad : {"127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:80x", "::1:80", "[::1]80", "[::1"})
    CHECK_THROWS_WITH(parse_listen_address(bad), Catch::Contains(std::string("'") + bad + "'"));
}

TEST_CASE("JSON edit forms: fields, types, limits and their statuses", "[http]") {
  const FormLimits limits{1 << 20, 10, 3};
  const std::string image = base64_encode(png_bytes(Image(8, 8, 3, 9)));
  const auto form_of = [&](nlohmann::json body) {
    body["image"] = image;
    return read_json_edit_form(body.dump(), limits);
  };
  const EditForm form = form_of({{"prompt", "a kite"}, {"n", 2}, {"seed", 7}, {"steps", 3}, {"strength", 0.5},
                                 {"guidance_scale", 4.0}, {"cache", "full"}, {"deadline_seconds", 2.5},
                                 {"size", "8x8"}, {"user", "ignored"}});
  CHECK(form.prompt == "a kite");
  CHECK(form.n == 2);
  CHECK(form.seed == 7u);
  CHECK(form.steps == 3);
  CHECK(form.strength == Approx(0.5));
  CHECK(form.guidance_scale == Approx(4.0));
  CHECK(form.deadline_seconds == Approx(2.5));
  CHECK(form.image.size() > 8);
  const sdk::EditOptions options = edit_options_of(form);
  CHECK(options.seed == 7u);
  CHECK(options.steps == 3);
  CHECK(options.cache_mode == sdk::CacheMode::full);
  CHECK(options.max_sequence_length == 0);  // the model's default unless given
  CHECK(edit_options_of(form_of({{"max_sequence_length", 128}})).max_sequence_length == 128);
  // The edit's settings are judged by the SDK's rules (flashps_edit_params_check), with the
  // form's field as param and the SDK's message without the struct's name.
  const auto settings_error = [&](nlohmann::json body) {
    try {
      edit_options_of(form_of(std::move(body)));
    } catch (const HttpError& error) {
      return std::make_tuple(error.status(), error.param(), std::string(error.what()));
    }
    return std::make_tuple(0, std::string(), std::string());
  };
  CHECK(settings_error({{"steps", 1001}}) ==
        std::make_tuple(400, std::string("steps"),
                        std::string("steps is 1001; it must be 0 (the model's recommendation) to 1000")));
  CHECK(settings_error({{"mask_grow_pixels", 16385}}) ==
        std::make_tuple(400, std::string("mask_grow_pixels"), std::string("mask_grow_pixels is 16385; it must be 0 to 16384")));
  CHECK(std::get<1>(settings_error({{"max_sequence_length", 513}})) == "max_sequence_length");
  CHECK(std::get<1>(settings_error({{"strength", 0}})) == "strength");
  CHECK(std::get<1>(settings_error({{"guidance_scale", 101}})) == "guidance_scale");
  CHECK(std::get<1>(settings_error({{"context_size", 20000}})) == "context_size");
  CHECK(std::get<1>(settings_error({{"mask_feather_pixels", -1}})) == "mask_feather_pixels");
  CHECK(std::get<1>(settings_error({{"cache", "sometimes"}})) == "cache");
  // The same bounds as the C API: 0 is the model's recommendation, 4096 < grow <= 16384 is fine here.
  CHECK(std::get<0>(settings_error({{"steps", 0}})) == 0);
  CHECK(std::get<0>(settings_error({{"max_sequence_length", 0}})) == 0);
  CHECK(std::get<0>(settings_error({{"mask_grow_pixels", 5000}})) == 0);
  CHECK(std::get<0>(settings_error({{"seed", 18446744073709551615ull}})) == 0);
  CHECK(status_of([&] { form_of({{"steps", 1e12}}); }) == 400);  // not an int: the form's own refusal

  CHECK(status_of([&] { form_of({{"n", 4}}); }) == 422);            // over max_images
  CHECK(status_of([&] { form_of({{"n", 0}}); }) == 422);
  CHECK(status_of([&] { form_of({{"prompt", "eleven char"}}); }) == 422);
  CHECK(status_of([&] { form_of({{"prompt", "ééééééééé"}}); }) == 0);  // 9 characters, 18 bytes
  CHECK(status_of([&] { form_of({{"n", "two"}}); }) == 400);
  CHECK(status_of([&] { form_of({{"n", 1.5}}); }) == 400);
  CHECK(status_of([&] { form_of({{"strength", "strong"}}); }) == 400);
  CHECK(status_of([&] { form_of({{"seed", -1}}); }) == 400);
  CHECK(status_of([&] { form_of({{"size", "big"}}); }) == 400);
  CHECK(status_of([&] { form_of({{"response_format", "jpg"}}); }) == 400);
  CHECK(status_of([&] { form_of({{"output_format", "webp"}}); }) == 422);
  CHECK(status_of([&] { form_of({{"prompt", {1, 2}}}); }) == 400);
  CHECK(status_of([&] { read_json_edit_form("{\"prompt\": \"x\"}", limits); }) == 400);  // no image
  CHECK(status_of([&] { read_json_edit_form("{\"image\": 5}", limits); }) == 400);
  CHECK(status_of([&] { read_json_edit_form("{\"image\": \"*not base64*\"}", limits); }) == 400);
  CHECK(status_of([&] { read_json_edit_form("[1, 2]", limits); }) == 400);
  CHECK(status_of([&] { read_json_edit_form("{\"image\": ", limits); }) == 400);
  CHECK(status_of([&] { read_json_edit_form(std::string(10000, '[') + std::string(10000, ']'), limits); }) == 400);
  CHECK(parse_size("auto") == std::nullopt);
  CHECK(parse_size("1024x768") == std::make_pair(1024, 768));
}

TEST_CASE("edit images: OpenAI's transparent mask, FlashPS's white mask, and their errors", "[http]") {
  const FormLimits limits{1 << 20, 100, 4};
  EditForm form;
  form.image = png_bytes(Image(8, 8, 3, 50));
  form.mask = png_bytes(rgba_with_hole(8, 8));

  SECTION("transparent pixels of the mask are regenerated; others, even nearly transparent, are kept") {
    const EditImages images = decode_edit_images(form, limits, MaskConvention::transparent);
    REQUIRE(images.mask.channels == 1);
    CHECK(images.mask.pixels[size_t(3) * 8 + 2] == 255);  // (2, 3) in the hole
    CHECK(images.mask.pixels[0] == 0);                    // alpha 1: kept
    CHECK(images.mask.pixels[size_t(7) * 8 + 7] == 0);
    int edited = 0;
    for (uint8_t value : images.mask.pixels) edited += value == 255;
    CHECK(edited == 12);
    CHECK(images.image.channels == 3);
  }
  SECTION("without a mask the image's own transparency is used, and its alpha dropped") {
    form.image = png_bytes(rgba_with_hole(8, 8));
    form.mask.clear();
    const EditImages images = decode_edit_images(form, limits, MaskConvention::transparent);
    CHECK(images.image.channels == 3);
    CHECK(images.mask.pixels[size_t(3) * 8 + 2] == 255);
  }
  SECTION("OpenAI convention: a mask without alpha, or no mask and an opaque image, is refused") {
    form.mask = png_bytes(Image(8, 8, 1, 255));
    CHECK(status_of([&] { decode_edit_images(form, limits, MaskConvention::transparent); }) == 400);
    form.mask.clear();
    CHECK(status_of([&] { decode_edit_images(form, limits, MaskConvention::transparent); }) == 400);
  }
  SECTION("white convention: the mask is handed to the SDK as sent, whatever its size") {
    Image mask(4, 5, 4, 0);
    mask.at(1, 1, 2) = 255;  // a blue stroke
    mask.at(1, 1, 3) = 255;
    form.mask = png_bytes(mask);
    const EditImages images = decode_edit_images(form, limits, MaskConvention::white);
    CHECK(images.mask.width == 4);
    CHECK(images.mask.height == 5);
    CHECK(images.mask.channels == 4);
    CHECK(images.mask.pixels == mask.pixels);
    form.mask.clear();
    CHECK(status_of([&] { decode_edit_images(form, limits, MaskConvention::white); }) == 400);
  }
  SECTION("OpenAI convention: a mask of another size is converted at its own size (the SDK resizes it)") {
    form.mask = png_bytes(rgba_with_hole(8, 9));
    const EditImages images = decode_edit_images(form, limits, MaskConvention::transparent);
    CHECK(images.mask.width == 8);
    CHECK(images.mask.height == 9);
    CHECK(images.mask.channels == 1);
  }
  SECTION("corrupt and truncated data is 400; over the pixel limit is 413") {
    const std::string whole = form.image;
    form.image = whole.substr(0, whole.size() / 2);
    CHECK(status_of([&] { decode_edit_images(form, limits, MaskConvention::transparent); }) == 400);
    form.image = "not an image at all";
    CHECK(status_of([&] { decode_edit_images(form, limits, MaskConvention::transparent); }) == 400);
    form.image = whole;
    const FormLimits tiny{63, 100, 4};  // 8x8 = 64 pixels
    CHECK(status_of([&] { decode_edit_images(form, tiny, MaskConvention::transparent); }) == 413);
  }
}

TEST_CASE("errors answer in OpenAI's shape with the status's type", "[http]") {
  const auto body = nlohmann::json::parse(HttpError(422, "n is 9", "n", "too_many_images").json());
  CHECK(body["error"]["message"] == "n is 9");
  CHECK(body["error"]["type"] == "invalid_request_error");
  CHECK(body["error"]["param"] == "n");
  CHECK(body["error"]["code"] == "too_many_images");
  CHECK(nlohmann::json::parse(HttpError(401, "key").json())["error"]["type"] == "authentication_error");
  CHECK(nlohmann::json::parse(HttpError(429, "full").json())["error"]["type"] == "rate_limit_error");
  CHECK(nlohmann::json::parse(HttpError(500, "x").json())["error"]["param"].is_null());
  CHECK(http_status_of(FLASHPS_REJECTED) == 429);
  CHECK(http_status_of(FLASHPS_UNSUPPORTED, true) == 413);
  CHECK(http_status_of(FLASHPS_DEADLINE_EXCEEDED) == 504);
}

TEST_CASE("metrics: Prometheus text with cumulative histogram buckets", "[http]") {
  ServerMetrics metrics;
  metrics.observe_step(0.02);
  metrics.observe_step(0.3);
  metrics.observe_step(50);
  metrics.count_outcome("done");
  metrics.count_cache(true, 1000);
  metrics.count_cache(false, 0);
  metrics.count_http(200);
  metrics.count_http(200);
  metrics.count_http(429);
  metrics.queued = 3;
  const std::string text = metrics.prometheus(sdk::EngineCounters{}, true);
  CHECK_THAT(text, Catch::Contains("flashps_queue_depth 3\n"));
  CHECK_THAT(text, Catch::Contains("flashps_step_seconds_bucket{le=\"0.025\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("flashps_step_seconds_bucket{le=\"0.5\"} 2\n"));
  CHECK_THAT(text, Catch::Contains("flashps_step_seconds_bucket{le=\"+Inf\"} 3\n"));
  CHECK_THAT(text, Catch::Contains("flashps_step_seconds_count 3\n"));
  CHECK_THAT(text, Catch::Contains("flashps_edits_total{outcome=\"done\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("flashps_cache_hits_total 1\n"));
  CHECK_THAT(text, Catch::Contains("flashps_cache_misses_total 1\n"));
  CHECK_THAT(text, Catch::Contains("flashps_cache_bytes_loaded_total 1000\n"));
  CHECK_THAT(text, Catch::Contains("flashps_http_requests_total{code=\"429\"} 1\n"));
  CHECK(metrics.http_requests() == 3);
}
