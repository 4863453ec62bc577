// flashps/editor.h: opening folders (and their errors), info, edits and their stats, parameter
// validation, load/edit progress and cancellation. Templates, threads and Stable Diffusion
// folders: test_editor_templates.cpp, test_editor_threads.cpp, test_editor_sd.cpp.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "api/api_test_support.h"
#include "flashps/flashps.h"
#include "serve/device_selection.h"

using namespace flashps::test::api;
namespace fs = std::filesystem;

namespace {

flashps_status open_status(const std::string& dir, const flashps_editor_params* params = nullptr) {
  flashps_editor* editor = reinterpret_cast<flashps_editor*>(0x1);  // must be reset to NULL on failure
  const flashps_status status = flashps_editor_open(dir.c_str(), params, &editor);
  if (status == FLASHPS_OK) flashps_editor_close(editor);
  else CHECK(editor == nullptr);
  return status;
}

struct ProgressLog {
  std::vector<std::string> stages;
  std::vector<int> steps;
  int cancel_at_call = -1;  // the call (0-based) that returns 0
};

int record_progress(const char* stage, int step, int, double, void* user_data) {
  auto* log = static_cast<ProgressLog*>(user_data);
  log->stages.emplace_back(stage);
  log->steps.push_back(step);
  return static_cast<int>(log->stages.size()) - 1 == log->cancel_at_call ? 0 : 1;
}

}  // namespace

TEST_CASE("editor open: NULL outputs, bad paths, corrupt and unsupported folders get their status", "[api]") {
  flashps::test::TempDir dir;
  const std::string model = tiny_model(dir);
  CHECK(flashps_editor_open(model.c_str(), nullptr, nullptr) == FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("flashps_editor_open: editor (the output) is NULL"));
  CHECK(open_status("") == FLASHPS_INVALID_ARGUMENT);

  CHECK(open_status("/nonexistent/model") == FLASHPS_NOT_FOUND);
  CHECK_THAT(last_error(), Catch::Contains("/nonexistent/model"));
  fs::create_directories(dir.path() / "empty");
  CHECK(open_status(dir.file("empty")) == FLASHPS_NOT_FOUND);
  CHECK_THAT(last_error(), Catch::Contains("not a model folder"));

  fs::create_directories(dir.path() / "other");
  std::ofstream(dir.path() / "other" / "model_index.json") << R"({"_class_name": "KandinskyV22Pipeline"})";
  CHECK(open_status(dir.file("other")) == FLASHPS_UNSUPPORTED);
  CHECK_THAT(last_error(), Catch::Contains("KandinskyV22Pipeline"));

  const std::string garbage_config = tiny_model(dir, "garbage_config");
  std::ofstream(fs::path(garbage_config) / "transformer" / "config.json") << "{ this is not JSON";
  CHECK(open_status(garbage_config) == FLASHPS_CORRUPT_DATA);
  CHECK_THAT(last_error(), Catch::Contains("transformer/config.json: invalid JSON"));

  const std::string garbage_index = tiny_model(dir, "garbage_index");
  std::ofstream(fs::path(garbage_index) / "model_index.json") << "[1, 2";
  CHECK(open_status(garbage_index) == FLASHPS_CORRUPT_DATA);
  CHECK_THAT(last_error(), Catch::Contains("model_index.json"));

  const std::string truncated = tiny_model(dir, "truncated");
  const fs::path weights = fs::path(truncated) / "transformer" / "diffusion_pytorch_model.safetensors";
  fs::resize_file(weights, fs::file_size(weights) / 2);
  CHECK(open_status(truncated) == FLASHPS_CORRUPT_DATA);
  CHECK_THAT(last_error(), Catch::Contains("diffusion_pytorch_model.safetensors"));

  const std::string no_scheduler = tiny_model(dir, "no_scheduler");
  fs::remove_all(fs::path(no_scheduler) / "scheduler");
  CHECK(open_status(no_scheduler) == FLASHPS_NOT_FOUND);
  CHECK_THAT(last_error(), Catch::Contains("scheduler_config.json"));

  flashps_editor_params params = flashps_editor_default_params();
  params.device = "no such device";
  CHECK(open_status(model, &params) == FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("unknown device \"no such device\""));
  if (flashps::serve::visible_cuda_devices() == 0) {
    params.device = "cuda";
    CHECK(open_status(model, &params) == FLASHPS_UNSUPPORTED);
    CHECK_THAT(last_error(), Catch::Contains("no CUDA device is visible"));
  }
  params = flashps_editor_default_params();
  params.capture_dir = "";
  CHECK(open_status(model, &params) == FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("capture_dir"));
  flashps_editor_close(nullptr);  // fine
}

TEST_CASE("editor info describes the loaded model; its strings stay valid while the editor is open", "[api]") {
  flashps::test::TempDir dir;
  const std::string model = tiny_model(dir);
  flashps_editor_params params = flashps_editor_default_params();
  params.device = "auto";  // a GPU when there is one, else the CPU
  const EditorPtr editor = open_editor(model, &params);
  flashps_model_info info{};
  info.struct_size = sizeof(info);
  CHECK(flashps_editor_info(nullptr, &info) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_editor_info(editor.get(), nullptr) == FLASHPS_INVALID_ARGUMENT);
  REQUIRE(flashps_editor_info(editor.get(), &info) == FLASHPS_OK);
  CHECK(info.struct_size == sizeof(info));
  CHECK(info.family == FLASHPS_FAMILY_FLUX);
  CHECK(std::string(info.model_dir) == model);
  CHECK(std::string(info.fingerprint).size() >= 16);
  CHECK(std::string(info.device) == (flashps::serve::visible_cuda_devices() > 0 ? "cuda:0" : "cpu"));
  CHECK(info.native_size == 0);
  CHECK(info.takes_text == 0);
  CHECK(info.default_steps == 28);
  CHECK(info.is_fill == 1);
  CHECK(info.unconditional == 0);
  CHECK(info.recommends_texture_transfer == 0);
  CHECK(info.bf16 == 0);

  params = flashps_editor_default_params();
  params.bf16 = 1;
  const EditorPtr bf16 = open_editor(model, &params);
  flashps_model_info bf16_info{};
  bf16_info.struct_size = sizeof(bf16_info);
  REQUIRE(flashps_editor_info(bf16.get(), &bf16_info) == FLASHPS_OK);
  CHECK(bf16_info.bf16 == 1);
  CHECK(std::string(bf16_info.fingerprint) == info.fingerprint);  // the same files
}

TEST_CASE("flashps_edit: the result, every stats field, and a note for an unused prompt", "[api]") {
  flashps::test::TempDir dir;
  const EditorPtr editor = open_editor(tiny_model(dir));
  const auto image = gradient(32, 32);
  const auto mask = box_mask(32, 32, 0, 0, 16);
  flashps_edit_params params = fast_params();
  flashps_image result{};
  flashps_edit_stats stats = empty_stats();
  REQUIRE(flashps_edit(editor.get(), &image->view, &mask->view, &params, &result, &stats) == FLASHPS_OK);
  CHECK(result.width == 32);
  CHECK(result.height == 32);
  CHECK(result.channels == 3);
  // Unmasked pixels come back unchanged.
  CHECK(std::memcmp(result.pixels + (31 * 32 + 31) * 3, &image->at(31, 31), 3) == 0);
  flashps_image_free(&result);
  CHECK(result.pixels == nullptr);

  CHECK(stats.struct_size == sizeof(stats));
  CHECK(stats.total_seconds > 0);
  CHECK(stats.denoise_seconds > 0);
  CHECK(stats.denoise_seconds <= stats.total_seconds);
  CHECK(stats.encode_seconds > 0);
  CHECK(stats.decode_seconds > 0);
  CHECK(stats.mask_ratio == Approx(0.25));  // one of 2x2 tokens
  CHECK(stats.cache_hit == 0);
  CHECK(stats.mode_used == FLASHPS_CACHE_FULL);
  CHECK(stats.steps_run == 2);
  CHECK(stats.cache_bytes == 0);
  CHECK(stats.width == 32);
  CHECK(stats.height == 32);
  CHECK(stats.compute_saving == Approx(1.0));
  CHECK(stats.blocks_from_cache == 0);
  CHECK(stats.blocks_computed == 0);
  CHECK(stats.entries_failed == 0);
  CHECK(stats.note_count == 1);
  CHECK(std::string(stats.notes) == "template not registered for these settings: computed in full");

  // Flux models take no text: the prompt is reported unused, one note per line.
  params.prompt = "a red bench";
  REQUIRE(flashps_edit(editor.get(), &image->view, &mask->view, &params, &result, &stats) == FLASHPS_OK);
  flashps_image_free(&result);
  CHECK(stats.note_count == 2);
  CHECK_THAT(std::string(stats.notes), Catch::Contains("the text prompt is not used") && Catch::Contains("\n"));

  // Defaults: a NULL params struct is the default params; stats may be NULL.
  REQUIRE(flashps_edit(editor.get(), &image->view, &mask->view, nullptr, &result, nullptr) == FLASHPS_OK);
  flashps_image_free(&result);
}

TEST_CASE("flashps_edit refuses NULLs, bad images and every out-of-range number, naming it", "[api]") {
  flashps::test::TempDir dir;
  const EditorPtr editor = open_editor(tiny_model(dir));
  const auto image = gradient(32, 32);
  const auto mask = box_mask(32, 32, 0, 0, 16);
  const flashps_edit_params good = fast_params();
  flashps_image result{};
  CHECK(flashps_edit(nullptr, &image->view, &mask->view, &good, &result, nullptr) == FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("editor is NULL"));
  CHECK(flashps_edit(editor.get(), nullptr, &mask->view, &good, &result, nullptr) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_edit(editor.get(), &image->view, nullptr, &good, &result, nullptr) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_edit(editor.get(), &image->view, &mask->view, &good, nullptr, nullptr) == FLASHPS_INVALID_ARGUMENT);

  flashps_image two_channels = image->view;
  two_channels.channels = 2;
  CHECK(flashps_edit(editor.get(), &two_channels, &mask->view, &good, &result, nullptr) == FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("image: channels is 2"));
  flashps_image no_pixels = mask->view;
  no_pixels.pixels = nullptr;
  CHECK(flashps_edit(editor.get(), &image->view, &no_pixels, &good, &result, nullptr) == FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("mask: pixels is NULL"));
  flashps_image empty = image->view;
  empty.width = 0;
  CHECK(flashps_edit(editor.get(), &empty, &mask->view, &good, &result, nullptr) == FLASHPS_INVALID_ARGUMENT);

  struct BadValue {
    const char* field;
    void (*set)(flashps_edit_params&);
  };
  const std::vector<BadValue> bad = {
      {"steps", [](flashps_edit_params& p) { p.steps = 1001; }},
      {"steps", [](flashps_edit_params& p) { p.steps = -1; }},
      {"strength", [](flashps_edit_params& p) { p.strength = 0.0f; }},
      {"strength", [](flashps_edit_params& p) { p.strength = 1.5f; }},
      {"guidance_scale", [](flashps_edit_params& p) { p.guidance_scale = std::numeric_limits<float>::quiet_NaN(); }},
      {"mask_grow_pixels", [](flashps_edit_params& p) { p.mask_grow_pixels = -1; }},
      {"mask_feather_pixels", [](flashps_edit_params& p) { p.mask_feather_pixels = -2; }},
      {"token_dilation", [](flashps_edit_params& p) { p.token_dilation = -1; }},
      {"mask_grow_pixels", [](flashps_edit_params& p) { p.mask_grow_pixels = 1 << 20; }},
      {"mask_feather_pixels", [](flashps_edit_params& p) { p.mask_feather_pixels = 20000; }},
      {"token_dilation", [](flashps_edit_params& p) { p.token_dilation = 5000; }},
      {"cache_mode", [](flashps_edit_params& p) { p.cache_mode = static_cast<flashps_cache_mode>(9); }},
      {"texture_transfer", [](flashps_edit_params& p) { p.texture_transfer = 7; }},
  };
  for (const BadValue& value : bad) {
    INFO(value.field);
    flashps_edit_params params = good;
    value.set(params);
    CHECK(flashps_edit(editor.get(), &image->view, &mask->view, &params, &result, nullptr) ==
          FLASHPS_INVALID_ARGUMENT);
    CHECK_THAT(last_error(), Catch::Contains(std::string("flashps_edit_params.") + value.field));
    CHECK(result.pixels == nullptr);
  }
  // Bounded by the image too: grow and feather reach at most its longer side (a wider feather
  // fades the whole mask and returns the input), dilation at most the token grid's (2x2 here).
  const std::vector<std::pair<std::string, void (*)(flashps_edit_params&)>> beyond_image = {
      {"mask_grow_pixels is 33; for this 32x32 image it must be 0 to 32",
       [](flashps_edit_params& p) { p.mask_grow_pixels = 33; }},
      {"mask_feather_pixels is 1000; for this 32x32 image it must be 0 to 32",
       [](flashps_edit_params& p) { p.mask_feather_pixels = 1000; }},
      {"token_dilation is 3; for this 32x32 image (2x2 tokens) it must be 0 to 2",
       [](flashps_edit_params& p) { p.token_dilation = 3; }},
  };
  for (const auto& [expected, set] : beyond_image) {
    INFO(expected);
    flashps_edit_params params = good;
    set(params);
    CHECK(flashps_edit(editor.get(), &image->view, &mask->view, &params, &result, nullptr) ==
          FLASHPS_INVALID_ARGUMENT);
    CHECK_THAT(last_error(), Catch::Contains(expected));
    CHECK(result.pixels == nullptr);
  }
  flashps_edit_params at_limits = good;
  at_limits.mask_grow_pixels = 32;
  at_limits.mask_feather_pixels = 32;
  at_limits.token_dilation = 2;
  REQUIRE(flashps_edit(editor.get(), &image->view, &mask->view, &at_limits, &result, nullptr) == FLASHPS_OK);
  flashps_image_free(&result);

  flashps_edit_params params = good;
  params.prompt_embeds_path = "/nonexistent/embeds.safetensors";
  CHECK(flashps_edit(editor.get(), &image->view, &mask->view, &params, &result, nullptr) == FLASHPS_NOT_FOUND);
  CHECK_THAT(last_error(), Catch::Contains("/nonexistent/embeds.safetensors"));
  // texture_transfer's valid values work.
  for (int texture : {-1, 0, 1}) {
    params = good;
    params.texture_transfer = texture;
    REQUIRE(flashps_edit(editor.get(), &image->view, &mask->view, &params, &result, nullptr) == FLASHPS_OK);
    flashps_image_free(&result);
  }
}

TEST_CASE("progress: loading reports stage load and can be cancelled; an edit cancels mid-way", "[api]") {
  flashps::test::TempDir dir;
  const std::string model = tiny_model(dir);
  ProgressLog load;
  flashps_editor_params params = flashps_editor_default_params();
  params.progress = record_progress;
  params.user_data = &load;
  const EditorPtr editor = open_editor(model, &params);
  CHECK(load.stages == std::vector<std::string>{"load", "load"});
  CHECK(load.steps == std::vector<int>{0, 1});

  for (int cancel_at : {0, 1}) {
    INFO("cancelled at call " << cancel_at);
    ProgressLog cancelling;
    cancelling.cancel_at_call = cancel_at;
    params.user_data = &cancelling;
    CHECK(open_status(model, &params) == FLASHPS_CANCELLED);
    CHECK(cancelling.stages.size() == static_cast<size_t>(cancel_at + 1));
  }

  const auto image = gradient(32, 32);
  const auto mask = box_mask(32, 32, 0, 0, 16);
  flashps_edit_params edit = fast_params();
  ProgressLog denoise;
  edit.progress = record_progress;
  edit.user_data = &denoise;
  flashps_image result{};
  REQUIRE(flashps_edit(editor.get(), &image->view, &mask->view, &edit, &result, nullptr) == FLASHPS_OK);
  flashps_image_free(&result);
  const auto first_denoise = std::find(denoise.stages.begin(), denoise.stages.end(), "denoise");
  REQUIRE(first_denoise != denoise.stages.end());

  ProgressLog cancelling;
  cancelling.cancel_at_call = static_cast<int>(first_denoise - denoise.stages.begin());  // after step 1 of 2
  edit.user_data = &cancelling;
  CHECK(flashps_edit(editor.get(), &image->view, &mask->view, &edit, &result, nullptr) == FLASHPS_CANCELLED);
  CHECK(last_error() == "cancelled");
  CHECK(result.pixels == nullptr);
  CHECK(cancelling.stages.size() == static_cast<size_t>(cancelling.cancel_at_call + 1));  // nothing after
  // The editor is still usable.
  edit.progress = nullptr;
  REQUIRE(flashps_edit(editor.get(), &image->view, &mask->view, &edit, &result, nullptr) == FLASHPS_OK);
  flashps_image_free(&result);
}

TEST_CASE("the default model: the bundled one when present, opened with a NULL folder", "[api]") {
  const std::string directory = flashps_default_model_dir();
  REQUIRE_FALSE(directory.empty());
  CHECK(std::string(flashps_default_model_dir()) == directory);  // stable
  if (std::getenv("FLASHPS_MODEL") != nullptr) return;  // a developer's choice: not the bundled model
  CHECK_THAT(directory, Catch::EndsWith("flashps-fill-small"));
  CHECK(fs::exists(fs::path(directory) / "transformer" / "config.json"));

  flashps_editor* raw = nullptr;
  REQUIRE(flashps_editor_open(nullptr, nullptr, &raw) == FLASHPS_OK);
  const EditorPtr editor(raw);
  flashps_model_info info{};
  info.struct_size = sizeof(info);
  REQUIRE(flashps_editor_info(editor.get(), &info) == FLASHPS_OK);
  CHECK(std::string(info.model_dir) == directory);
  CHECK(info.native_size == 256);
  CHECK(info.unconditional == 1);
  CHECK(info.default_steps == 1);
  CHECK(info.recommends_texture_transfer == 1);
  const auto image = gradient(64, 48);
  const auto mask = box_mask(64, 48, 16, 16, 16);
  flashps_image result{};
  flashps_edit_stats stats = empty_stats();
  REQUIRE(flashps_edit(editor.get(), &image->view, &mask->view, nullptr, &result, &stats) == FLASHPS_OK);
  CHECK(stats.steps_run == 1);  // steps 0: the model's recommendation
  CHECK(result.width == 64);
  flashps_image_free(&result);
}
