// One table (issue 42): the same red-stroke, blue-stroke, alpha-only, soft-grey and other-size
// masks select the same pixels through every front end: the C API, the app's mask path, the CLI
// (`flashps edit`), the HTTP server's native route and its OpenAI route (that API's convention:
// the equivalent mask whose fully transparent pixels mark the region), and a plugin (the
// first-party Generative Fill run by `flashps plugin run`, i.e. the plugin host).
//
// The observable: an edit pastes every unselected pixel back from the original, so the pixels an
// edit changed lie inside the selection, and a fill changes (nearly) all of the selection. Each
// case's selection is built by the test (a box), not computed by the SDK.
//
// The app (desktop_app/) loads a mask with mask::for_image(loaded, width, height)
// (Document::setLoadedMask) and edits with the document's 1-channel mask; its row does exactly
// that here. desktop_app/tests/test_loading.cpp checks that the app calls that function.
//
// Run by ctest as front_ends.mask_selection (tests/CMakeLists.txt), which gives the CLI's path in
// FLASHPS_CLI; hidden from the default test list.
#include <httplib.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <flashps/flashps.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "api/api_test_support.h"
#include "http/base64.h"
#include "support/temp_dir.h"

namespace {

namespace sdk = flashps::sdk;
using nlohmann::json;

constexpr uint32_t kSide = 64;
// The region every case selects (in the image's pixels): x 16..39, y 8..31.
constexpr uint32_t kX0 = 16, kY0 = 8, kBox = 24;

bool in_box(uint32_t x, uint32_t y) { return x >= kX0 && x < kX0 + kBox && y >= kY0 && y < kY0 + kBox; }

struct MaskCase {
  std::string name;
  sdk::Image mask;         // as a user would paint it
  sdk::Image transparent;  // the same selection in OpenAI's convention (alpha 0 = edit)
};

// `paint(image, x, y, selected)` sets one pixel of a width x height mask.
sdk::Image painted(uint32_t width, uint32_t height, uint32_t channels,
                   const std::function<void(uint8_t*, bool, uint32_t, uint32_t)>& paint) {
  sdk::Image image(width, height, channels);
  const uint32_t scale = kSide / width;  // other-size masks: a fraction of the image
  for (uint32_t y = 0; y < height; ++y)
    for (uint32_t x = 0; x < width; ++x)
      paint(&image.pixels[(size_t(y) * width + x) * channels], in_box(x * scale, y * scale), x, y);
  return image;
}

sdk::Image transparent_for(uint32_t width, uint32_t height) {
  return painted(width, height, 4, [](uint8_t* pixel, bool selected, uint32_t, uint32_t) {
    pixel[0] = pixel[1] = pixel[2] = 90;
    pixel[3] = selected ? 0 : 255;
  });
}

std::vector<MaskCase> mask_cases() {
  std::vector<MaskCase> cases;
  cases.push_back({"red stroke on black (RGB)", painted(kSide, kSide, 3, [](uint8_t* p, bool selected, uint32_t, uint32_t) {
                     p[0] = selected ? 255 : 0;
                   }),
                   transparent_for(kSide, kSide)});
  cases.push_back({"blue stroke on black (RGB)", painted(kSide, kSide, 3, [](uint8_t* p, bool selected, uint32_t, uint32_t) {
                     p[2] = selected ? 255 : 0;
                   }),
                   transparent_for(kSide, kSide)});
  cases.push_back({"alpha-only stroke (black, transparent elsewhere)",
                   painted(kSide, kSide, 4, [](uint8_t* p, bool selected, uint32_t, uint32_t) { p[3] = selected ? 255 : 0; }),
                   transparent_for(kSide, kSide)});
  // Grey 200 is selected (>= 128); a grey-100 band beside it is not.
  cases.push_back({"soft grey (1 channel)", painted(kSide, kSide, 1, [](uint8_t* p, bool selected, uint32_t x, uint32_t y) {
                     p[0] = selected ? 200 : (y >= 40 && y < 56 && x >= 8) ? 100 : 0;
                   }),
                   transparent_for(kSide, kSide)});
  // Half the image's size: resized (nearest) to it.
  cases.push_back({"other size (32x32 grey)", painted(kSide / 2, kSide / 2, 1, [](uint8_t* p, bool selected, uint32_t, uint32_t) {
                     p[0] = selected ? 255 : 0;
                   }),
                   transparent_for(kSide / 2, kSide / 2)});
  return cases;
}

// Every pixel differs from its neighbours, so a fill cannot reproduce it by chance.
sdk::Image noise_image() {
  sdk::Image image(kSide, kSide, 3);
  uint32_t state = 12345;
  for (uint8_t& value : image.pixels) {
    state = state * 1664525u + 1013904223u;
    value = static_cast<uint8_t>(state >> 24);
  }
  return image;
}

// The pixels an edit changed lie inside the selection, and it changed nearly all of it.
void check_selection(const sdk::Image& input, const sdk::Image& output) {
  REQUIRE(output.width == input.width);
  REQUIRE(output.height == input.height);
  REQUIRE(output.channels == 3);
  int changed_outside = 0, kept_inside = 0, inside = 0;
  for (uint32_t y = 0; y < kSide; ++y)
    for (uint32_t x = 0; x < kSide; ++x) {
      const size_t i = (size_t(y) * kSide + x) * 3;
      const bool changed = input.pixels[i] != output.pixels[i] || input.pixels[i + 1] != output.pixels[i + 1] ||
                           input.pixels[i + 2] != output.pixels[i + 2];
      inside += in_box(x, y);
      changed_outside += changed && !in_box(x, y);
      kept_inside += !changed && in_box(x, y);
    }
  CHECK(changed_outside == 0);
  CHECK(kept_inside <= inside / 20);
}

std::string read_file(const std::string& path) {
  const sdk::Image image = sdk::Image::load(path);  // checks it is an image
  (void)image;
  std::string bytes;
  FILE* file = std::fopen(path.c_str(), "rb");
  REQUIRE(file);
  char buffer[65536];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, file)) > 0;) bytes.append(buffer, n);
  std::fclose(file);
  return bytes;
}

void run_command(const std::string& command) {
  INFO(command);
  REQUIRE(std::system((command + " >/dev/null 2>&1").c_str()) == 0);
}

sdk::Image png_decoded(const std::string& bytes) { return sdk::Image::decode(bytes.data(), bytes.size(), "answer"); }

// The native route: submit, then fetch the result once it is ready.
sdk::Image http_native(httplib::Client& client, const std::string& image_png, const std::string& mask_png) {
  const json body = {{"image", flashps::http::base64_encode(image_png)},
                     {"mask", flashps::http::base64_encode(mask_png)},
                     {"steps", 1},
                     {"seed", 1},
                     {"cache", "full"}};
  const auto submitted = client.Post("/v1/edits", body.dump(), "application/json");
  REQUIRE(submitted);
  INFO(submitted->body);
  REQUIRE(submitted->status == 202);
  const std::string id = json::parse(submitted->body)["id"];
  for (int attempt = 0; attempt < 1200; ++attempt) {
    const auto result = client.Get(("/v1/edits/" + id + "/result").c_str());
    REQUIRE(result);
    if (result->status == 200) return png_decoded(result->body);
    INFO(result->body);
    REQUIRE(result->status == 409);  // not finished yet
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  FAIL("the native edit did not finish in a minute");
  return {};
}

sdk::Image http_openai(httplib::Client& client, const std::string& image_png, const std::string& mask_png) {
  const httplib::MultipartFormDataItems form = {{"image", image_png, "image.png", "image/png"},
                                                {"mask", mask_png, "mask.png", "image/png"},
                                                {"prompt", "", "", ""},
                                                {"response_format", "b64_json", "", ""},
                                                {"steps", "1", "", ""},
                                                {"seed", "1", "", ""},
                                                {"cache", "full", "", ""}};
  const auto answer = client.Post("/v1/images/edits", form);
  REQUIRE(answer);
  INFO(answer->body);
  REQUIRE(answer->status == 200);
  const auto png = flashps::http::base64_decode(json::parse(answer->body)["data"][0]["b64_json"].get<std::string>());
  REQUIRE(png);
  return png_decoded(*png);
}

}  // namespace

TEST_CASE("every front end selects the same pixels for the same mask", "[.][front-ends]") {
  const char* cli = std::getenv("FLASHPS_CLI");
  REQUIRE(cli);  // set by ctest (front_ends.mask_selection)
  flashps::test::TempDir dir;
  const std::string model = flashps::test::api::tiny_model(dir);
  const std::string store = dir.file("store");
  const sdk::Image image = noise_image();
  const std::string image_path = dir.file("image.png");
  image.save(image_path);
  const std::string image_png = read_file(image_path);

  sdk::EditorOptions editor_options;
  const sdk::Editor editor = sdk::Editor::open(model, editor_options);
  sdk::EngineOptions engine_options;
  const sdk::Engine engine = sdk::Engine::open(model, engine_options);
  sdk::ServerOptions server_options;
  server_options.listen = "127.0.0.1:0";
  const sdk::Server server = sdk::Server::start(engine, server_options);
  httplib::Client client("127.0.0.1", server.port());
  client.set_read_timeout(120, 0);

  sdk::EditOptions settings;
  settings.steps = 1;
  settings.seed = 1;
  settings.cache_mode = sdk::CacheMode::full;
  settings.texture_transfer = false;
  const std::string quoted_cli = "'" + std::string(cli) + "'";

  int case_number = 0;
  for (const MaskCase& mask_case : mask_cases()) {
    ++case_number;
    const std::string mask_path = dir.file("mask" + std::to_string(case_number) + ".png");
    const std::string transparent_path = dir.file("transparent" + std::to_string(case_number) + ".png");
    mask_case.mask.save(mask_path);
    mask_case.transparent.save(transparent_path);
    const std::string mask_png = read_file(mask_path), transparent_png = read_file(transparent_path);

    const std::vector<std::pair<std::string, std::function<sdk::Image()>>> front_ends = {
        {"C API (flashps_edit)",
         [&] {
           flashps_image mask{};
           REQUIRE(flashps_image_load(mask_path.c_str(), &mask) == FLASHPS_OK);
           const flashps_image input = image.view();
           const flashps_edit_params params = settings.to_c();
           flashps_image result{};
           const flashps_status status = flashps_edit(editor.get(), &input, &mask, &params, &result, nullptr);
           flashps_image_free(&mask);
           INFO(flashps_last_error());
           REQUIRE(status == FLASHPS_OK);
           return sdk::Image::adopt(result);
         }},
        {"app (mask::for_image, then the document's mask)",
         [&] {
           const sdk::Image loaded = sdk::mask::for_image(sdk::Image::load(mask_path), kSide, kSide);
           return editor.edit(image, loaded, settings).image;
         }},
        {"CLI (flashps edit)",
         [&] {
           const std::string out = dir.file("cli" + std::to_string(case_number) + ".png");
           run_command(quoted_cli + " edit --model '" + model + "' --image '" + image_path + "' --mask '" + mask_path +
                       "' --out '" + out + "' --steps 1 --seed 1 --cache full --texture off -q --cache-dir '" + store +
                       "'");
           return sdk::Image::load(out);
         }},
        {"HTTP native (POST /v1/edits)", [&] { return http_native(client, image_png, mask_png); }},
        {"HTTP OpenAI (POST /v1/images/edits, transparent = edit)",
         [&] { return http_openai(client, image_png, transparent_png); }},
        {"plugin (flashps plugin run flashps.generative-fill)",
         [&] {
           const std::string out = dir.file("plugin" + std::to_string(case_number) + ".png");
           run_command(quoted_cli + " plugin run flashps.generative-fill --model '" + model + "' --image '" +
                       image_path + "' --mask '" + mask_path + "' --param steps=1 --out '" + out +
                       "' -q --cache-dir '" + store + "'");
           return sdk::Image::load(out);
         }},
    };
    for (const auto& [front_end, edit] : front_ends) {
      INFO(mask_case.name << " through " << front_end);
      check_selection(image, edit());
    }
  }
}
