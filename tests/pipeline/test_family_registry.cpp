// The family registry (pipeline/family_registry.h): one detector for every front end, clear
// refusals of families FlashPS does not support, and a family registered by a test (a few lines)
// that the C API's editors and the serving engine use without knowing it.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "api/api_test_support.h"
#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "flashps/flashps.h"
#include "pipeline/family_registry.h"
#include "pipeline/flux/flux_family.h"

using namespace flashps;
using namespace flashps::test::api;
namespace fs = std::filesystem;

namespace {

void write_index(const fs::path& folder, const std::string& pipeline_class, const char* transformer_class = nullptr) {
  fs::create_directories(folder);
  std::ofstream(folder / "model_index.json") << "{\"_class_name\": \"" << pipeline_class << "\"}";
  if (transformer_class) {
    fs::create_directories(folder / "transformer");
    std::ofstream(folder / "transformer" / "config.json") << "{\"_class_name\": \"" << transformer_class << "\"}";
  }
}

// The toy family: folders whose model_index.json names "ToyInpaintPipeline". Its model is a Flux
// model under another name; what matters is that nothing outside this file knows the family.
class ToyModel final : public InpaintModel {
 public:
  ToyModel(const FamilyEntry& family, std::shared_ptr<InpaintModel> weights) : family_(family), weights_(std::move(weights)) {}
  const FamilyEntry& family() const override { return family_; }
  ModelCapabilities capabilities() const override {
    ModelCapabilities capabilities = weights_->capabilities();
    capabilities.kv_replay = false;  // the toy replays block outputs only
    capabilities.why_no_kv = "the toy family keeps block outputs only";
    return capabilities;
  }
  const std::string& model_dir() const override { return weights_->model_dir(); }
  const std::string& fingerprint() const override { return weights_->fingerprint(); }
  at::Device device() const override { return weights_->device(); }
  at::ScalarType dtype() const override { return weights_->dtype(); }
  std::unique_ptr<InpaintPipeline> new_pipeline(std::shared_ptr<engine::CaptureStore> store) const override {
    return weights_->new_pipeline(std::move(store));
  }

 private:
  const FamilyEntry& family_;
  std::shared_ptr<InpaintModel> weights_;
};

const FamilyEntry& toy_family() {
  static const FamilyEntry family{
      "toy", "Toy", 0, "Toy (ToyInpaintPipeline folders)",
      [](const ModelSource& source) { return source.pipeline_class == "ToyInpaintPipeline"; },
      [](const ModelSource& source, const ModelLoadOptions& options) -> std::shared_ptr<InpaintModel> {
        ModelSource as_flux = source;
        as_flux.pipeline_class = "FluxFillPipeline";
        return std::make_shared<ToyModel>(toy_family(), flux_family().load(as_flux, options));
      }};
  return family;
}

struct RegisteredToy {
  RegisteredToy() { register_model_family(toy_family()); }
  ~RegisteredToy() { unregister_model_family("toy"); }
};

}  // namespace

TEST_CASE("one detector: Flux and Stable Diffusion folders, and clear refusals of other families", "[pipeline][registry]") {
  flashps::test::TempDir dir;
  CHECK(detect_model_family(tiny_model(dir)).name == "flux");
  write_index(dir.path() / "sd", "StableDiffusionXLInpaintPipeline");
  CHECK(detect_model_family(dir.file("sd")).name == "stable-diffusion");

  // Families with a supported family's name prefix or transformer class are refused by name,
  // listing what is supported, instead of reaching a loader that fails on a missing file.
  write_index(dir.path() / "sd3", "StableDiffusion3InpaintPipeline", "SD3Transformer2DModel");
  CHECK_THROWS_AS(detect_model_family(dir.file("sd3")), UnsupportedError);
  CHECK_THROWS_WITH(detect_model_family(dir.file("sd3")),
                    Catch::Contains("StableDiffusion3InpaintPipeline is Stable Diffusion 3") &&
                        Catch::Contains("supported: Flux") && Catch::Contains("Stable Diffusion 1.x, 2.x and XL"));
  write_index(dir.path() / "kontext", "FluxKontextPipeline", "FluxTransformer2DModel");
  CHECK_THROWS_WITH(detect_model_family(dir.file("kontext")), Catch::Contains("Flux Kontext"));
  write_index(dir.path() / "pixart", "PixArtAlphaPipeline", "PixArtTransformer2DModel");
  CHECK_THROWS_WITH(detect_model_family(dir.file("pixart")),
                    Catch::Contains("\"PixArtAlphaPipeline\" is not one FlashPS supports"));
  // A transformer folder of another class without a model_index.json is not taken for Flux.
  fs::create_directories(dir.path() / "bare" / "transformer");
  std::ofstream(dir.path() / "bare" / "transformer" / "config.json") << R"({"_class_name": "SD3Transformer2DModel"})";
  CHECK_THROWS_AS(detect_model_family(dir.file("bare")), NotFoundError);
  CHECK_THROWS_AS(detect_model_family(dir.file("nowhere")), NotFoundError);

  // The C API refuses them with FLASHPS_UNSUPPORTED and the same message.
  flashps_editor* editor = nullptr;
  CHECK(flashps_editor_open(dir.file("sd3").c_str(), nullptr, &editor) == FLASHPS_UNSUPPORTED);
  CHECK_THAT(last_error(), Catch::Contains("Stable Diffusion 3"));
  flashps_engine* engine = nullptr;
  CHECK(flashps_engine_open(dir.file("kontext").c_str(), nullptr, &engine) == FLASHPS_UNSUPPORTED);
  CHECK_THAT(last_error(), Catch::Contains("Flux Kontext"));
}

TEST_CASE("a family registered at run time is detected, opened and served through the C API", "[pipeline][registry][api]") {
  flashps::test::TempDir dir;
  const std::string folder = tiny_model(dir);
  nlohmann::json index = read_json_file(folder + "/model_index.json");
  index["_class_name"] = "ToyInpaintPipeline";
  write_json_file(folder + "/model_index.json", index);
  CHECK_THROWS_WITH(detect_model_family(folder), Catch::Contains("\"ToyInpaintPipeline\" is not one"));

  const RegisteredToy registered;
  CHECK_THROWS_AS(register_model_family(toy_family()), InvalidArgumentError);  // one name, once
  CHECK(detect_model_family(folder).name == "toy");

  const EditorPtr editor = open_editor(folder);
  flashps_model_info info{};
  info.struct_size = sizeof(info);
  REQUIRE(flashps_editor_info(editor.get(), &info) == FLASHPS_OK);
  CHECK(info.family == FLASHPS_FAMILY_OTHER);
  CHECK(std::string(info.family_name) == "toy");
  const auto image = gradient(32, 32);
  const auto mask = box_mask(32, 32, 8, 8, 12);
  flashps_edit_params params = fast_params();
  flashps_image edited{};
  REQUIRE(flashps_edit(editor.get(), &image->view, &mask->view, &params, &edited, nullptr) == FLASHPS_OK);
  // The family's own rules hold at the API: it replays no kv.
  params.cache_mode = FLASHPS_CACHE_KV;
  flashps_image refused{};
  CHECK(flashps_edit(editor.get(), &image->view, &mask->view, &params, &refused, nullptr) == FLASHPS_UNSUPPORTED);
  CHECK_THAT(last_error(), Catch::Contains("the toy family keeps block outputs only"));
  params.cache_mode = FLASHPS_CACHE_AUTO;

  // The serving engine runs it too, and gives the editor's image.
  flashps_engine* engine = nullptr;
  REQUIRE(flashps_engine_open(folder.c_str(), nullptr, &engine) == FLASHPS_OK);
  flashps_model_info engine_info{};
  engine_info.struct_size = sizeof(engine_info);
  REQUIRE(flashps_engine_info(engine, &engine_info) == FLASHPS_OK);
  CHECK(std::string(engine_info.family_name) == "toy");
  flashps_request* request = nullptr;
  REQUIRE(flashps_engine_submit(engine, &image->view, &mask->view, &params, nullptr, &request) == FLASHPS_OK);
  flashps_image served{};
  REQUIRE(flashps_request_result(request, -1, &served, nullptr) == FLASHPS_OK);
  REQUIRE(served.width == edited.width);
  CHECK(std::memcmp(served.pixels, edited.pixels, size_t{served.width} * served.height * served.channels) == 0);
  flashps_image_free(&served);
  flashps_image_free(&edited);
  flashps_request_free(request);
  flashps_engine_close(engine);
}
