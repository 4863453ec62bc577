// flashps/model.h: a model's weights loaded once and shared by the editors and engines opened over
// it (reference-counted), with the same images as an editor that loads its own.
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstring>

#include "api/api_test_support.h"
#include "flashps/flashps.h"
#include "models/random/random_model.h"
#include "support/child_usage.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace flashps::test::api;

namespace {

flashps_model* open_model(const std::string& folder) {
  flashps_model* model = nullptr;
  const flashps_status status = flashps_model_open(folder.c_str(), nullptr, &model);
  INFO(flashps_last_error());
  REQUIRE(status == FLASHPS_OK);
  return model;
}

// A Flux Fill model whose weights (~100 MB in float32) dwarf everything else an editor or an
// engine allocates, so resident memory shows whether the weights are held once or twice.
std::string heavy_model(const flashps::test::TempDir& dir) {
  flashps::RandomFluxModelSpec spec = flashps::small_fill_model_spec();
  spec.transformer.num_layers = 4;
  spec.transformer.num_single_layers = 4;
  spec.transformer.num_attention_heads = 8;
  spec.transformer.attention_head_dim = 64;
  spec.vae_config["block_out_channels"] = {8, 8, 8, 8};
  const std::string path = dir.file("heavy");
  flashps::write_random_flux_model(path, spec);
  return path;
}

}  // namespace

TEST_CASE("an editor and an engine over one model edit as editors with their own weights do", "[api][model]") {
  flashps::test::TempDir dir;
  const std::string folder = tiny_model(dir);
  flashps_model* model = open_model(folder);
  flashps_model_info info{};
  info.struct_size = sizeof(info);
  REQUIRE(flashps_model_get_info(model, &info) == FLASHPS_OK);
  CHECK(info.family == FLASHPS_FAMILY_FLUX);
  CHECK(std::string(info.family_name) == "flux");
  CHECK(std::string(info.model_dir) == folder);
  // A caller built against API 5 passes the struct without family_name: the rest is filled, nothing past it.
  struct {
    flashps_model_info info;
    unsigned char after[8];
  } api5{};
  std::memset(&api5, 0xAB, sizeof(api5));
  api5.info.struct_size = offsetof(flashps_model_info, family_name);
  REQUIRE(flashps_model_get_info(model, &api5.info) == FLASHPS_OK);
  CHECK(api5.info.family == FLASHPS_FAMILY_FLUX);
  const auto* tail = reinterpret_cast<const unsigned char*>(&api5.info) + offsetof(flashps_model_info, family_name);
  CHECK(tail[0] == 0xAB);

  flashps_editor* shared_editor = nullptr;
  REQUIRE(flashps_editor_open_model(model, nullptr, &shared_editor) == FLASHPS_OK);
  flashps_engine* engine = nullptr;
  REQUIRE(flashps_engine_open_model(model, nullptr, &engine) == FLASHPS_OK);
  flashps_model_free(model);  // the editor and the engine hold their own references

  const auto image = gradient(32, 32);
  const auto mask = box_mask(32, 32, 6, 6, 14);
  const flashps_edit_params params = fast_params();
  flashps_image alone{}, shared{}, served{};
  const EditorPtr own_editor = open_editor(folder);
  REQUIRE(flashps_edit(own_editor.get(), &image->view, &mask->view, &params, &alone, nullptr) == FLASHPS_OK);
  REQUIRE(flashps_edit(shared_editor, &image->view, &mask->view, &params, &shared, nullptr) == FLASHPS_OK);
  flashps_request* request = nullptr;
  REQUIRE(flashps_engine_submit(engine, &image->view, &mask->view, &params, nullptr, &request) == FLASHPS_OK);
  REQUIRE(flashps_request_result(request, -1, &served, nullptr) == FLASHPS_OK);
  const size_t bytes = size_t{alone.width} * alone.height * alone.channels;
  CHECK(std::memcmp(alone.pixels, shared.pixels, bytes) == 0);
  CHECK(std::memcmp(alone.pixels, served.pixels, bytes) == 0);
  for (flashps_image* result : {&alone, &shared, &served}) flashps_image_free(result);
  flashps_request_free(request);
  flashps_engine_close(engine);
  flashps_editor_close(shared_editor);
}

TEST_CASE("an editor or engine over a model refuses another precision or device than the model's", "[api][model]") {
  flashps::test::TempDir dir;
  flashps_model* model = open_model(tiny_model(dir));
  flashps_editor_params editor_params = flashps_editor_default_params();
  editor_params.bf16 = 1;
  flashps_editor* editor = nullptr;
  CHECK(flashps_editor_open_model(model, &editor_params, &editor) == FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("flashps_editor_params.bf16 is set, but the model was opened in float32"));
  flashps_engine_params engine_params = flashps_engine_default_params();
  engine_params.bf16 = 1;
  flashps_engine* engine = nullptr;
  CHECK(flashps_engine_open_model(model, &engine_params, &engine) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_editor_open_model(nullptr, nullptr, &editor) == FLASHPS_INVALID_ARGUMENT);
  flashps_model* not_opened = model;  // a failed open writes NULL to its output
  CHECK(flashps_model_open("", nullptr, &not_opened) == FLASHPS_INVALID_ARGUMENT);
  CHECK(not_opened == nullptr);
  flashps_model_free(model);
}

// Runs one configuration in a fresh process (this test binary, its hidden case below): a forked
// child would inherit the parent's OpenMP pool, which does not survive fork. Returns the peak RSS
// growth in KiB that the child reports.
long rss_growth_of(const std::string& configuration, const std::string& folder) {
  ::setenv("FLASHPS_RSS_CONFIGURATION", configuration.c_str(), 1);
  ::setenv("FLASHPS_RSS_MODEL", folder.c_str(), 1);
  const std::string command = std::filesystem::read_symlink("/proc/self/exe").string() + " '[.model_rss_child]' 2>&1";
  FILE* child = ::popen(command.c_str(), "r");
  REQUIRE(child != nullptr);
  std::string output;
  char buffer[4096];
  while (size_t got = std::fread(buffer, 1, sizeof buffer, child)) output.append(buffer, got);
  const int status = ::pclose(child);
  INFO(output);
  REQUIRE(status == 0);
  const size_t found = output.find("RSS_GROWTH_KB=");
  REQUIRE(found != std::string::npos);
  return std::stol(output.substr(found + std::strlen("RSS_GROWTH_KB=")));
}

TEST_CASE("model_rss_child", "[.model_rss_child]") {
  const char* configuration = std::getenv("FLASHPS_RSS_CONFIGURATION");
  const char* folder = std::getenv("FLASHPS_RSS_MODEL");
  REQUIRE(configuration);
  REQUIRE(folder);
  std::ofstream("/proc/self/clear_refs") << "5";  // the peak from here on
  const long before = flashps::test::proc_status_kb("VmRSS:");
  flashps_model* model = nullptr;
  flashps_editor* editor = nullptr;
  flashps_engine* engine = nullptr;
  const std::string which = configuration;
  if (which == "editor") {
    REQUIRE(flashps_editor_open(folder, nullptr, &editor) == FLASHPS_OK);
  } else if (which == "one model") {
    REQUIRE(flashps_model_open(folder, nullptr, &model) == FLASHPS_OK);
    REQUIRE(flashps_editor_open_model(model, nullptr, &editor) == FLASHPS_OK);
    REQUIRE(flashps_engine_open_model(model, nullptr, &engine) == FLASHPS_OK);
  } else {
    REQUIRE(flashps_editor_open(folder, nullptr, &editor) == FLASHPS_OK);
    REQUIRE(flashps_engine_open(folder, nullptr, &engine) == FLASHPS_OK);
  }
  std::printf("RSS_GROWTH_KB=%ld\n", flashps::test::proc_status_kb("VmHWM:") - before);
  flashps_engine_close(engine);
  flashps_editor_close(editor);
  flashps_model_free(model);
}

TEST_CASE("an editor plus an engine over one model hold its weights once", "[api][model][memory][slow]") {
  flashps::test::TempDir dir;
  const std::string folder = heavy_model(dir);
  const long editor_alone = rss_growth_of("editor", folder);
  const long one_model = rss_growth_of("one model", folder);
  const long two_copies = rss_growth_of("each from the folder", folder);
  INFO("peak RSS growth: editor " << editor_alone << " KiB, editor + engine over one model " << one_model
                                  << " KiB, editor + engine each from the folder " << two_copies << " KiB");
  CHECK(editor_alone > 60 * 1024);  // the weights are what the figure measures
  CHECK(double(one_model) <= 1.1 * double(editor_alone));
  CHECK(double(two_copies) > 1.5 * double(editor_alone));  // the check can fail: two copies
}
