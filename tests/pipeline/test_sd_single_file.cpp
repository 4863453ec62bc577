// A Stable Diffusion single file in the original (LDM) keys loads as a whole pipeline and edits
// bit-identically to the diffusers folder of the same weights; what it lacks names its flag.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "core/files/safetensors.h"
#include "pipeline/family_registry.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"
#include "support/tiny_pipeline.h"
#include "support/tiny_sd_folder.h"

using namespace flashps;
namespace fs = std::filesystem;

namespace {

std::string small_file_text(const fs::path& path) {
  std::ifstream stream(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(stream), {});
}

// `from`'s tensors (LDM keys, as stored) in a file carrying `folder`'s configs (and tokenizer
// files when `with_tokenizer`), as FlashPS writes single files; `drop_prefix` leaves a part out.
void write_carried_copy(const std::string& from, const std::string& folder, const std::string& to, bool with_tokenizer,
                        const std::string& drop_prefix = "") {
  const auto file = SafetensorsFile::open(from);
  SafetensorsWriter writer;
  for (const TensorInfo& tensor : file->tensors())
    if (drop_prefix.empty() || tensor.name.rfind(drop_prefix, 0) != 0)
      writer.add(tensor.name, tensor.dtype, tensor.shape, file->data(tensor), tensor.byte_size());
  nlohmann::json carried;
  for (const char* config : {"model_index.json", "unet/config.json", "vae/config.json", "text_encoder/config.json",
                             "scheduler/scheduler_config.json"})
    carried[config] = read_json_file((fs::path(folder) / config).string()).dump();
  if (with_tokenizer)
    for (const auto& entry : fs::directory_iterator(fs::path(folder) / "tokenizer"))
      carried["tokenizer/" + entry.path().filename().string()] = small_file_text(entry.path());
  writer.set_metadata("flashps.files", carried.dump());
  writer.write(to);
}

}  // namespace

TEST_CASE("single files: an SD inpainting file in LDM keys edits bit-identically to its folder", "[model_files][pipeline]") {
  FLASHPS_REQUIRE_FIXTURE(single, "single_file_sd_inpaint_tiny");
  test::TempDir dir;
  const std::string folder = test::tiny_sd_folder(*test::fixtures_root(), dir, 9);
  const std::string file = dir.file("sd_inpaint.safetensors");
  write_carried_copy((single / "sd_inpaint_tiny.safetensors").string(), folder, file, true);

  const ModelSource source = ModelSource::read(file);
  CHECK(std::string(source.recognised.type->name) == "sd15-inpaint");
  CHECK(detect_model_family(source).name == "stable-diffusion");
  const auto from_file = load_model(file);
  const auto from_folder = load_model(folder);
  CHECK(from_file->capabilities().is_fill);

  const Image image = test::gradient_image(64, 64);
  EditRequest request = test::request_for(image, test::box_mask(64, 64, 16, 16, 24), 3, 2);
  request.mode = CacheMode::full;
  request.prompt = "a door";
  const EditResult a = from_file->new_pipeline(nullptr)->edit(request);
  const EditResult b = from_folder->new_pipeline(nullptr)->edit(request);
  CHECK(a.image.pixels == b.image.pixels);
}

TEST_CASE("single files: SD tokenizers come from --tokenizers or beside the file; parts left out name their flag",
          "[model_files]") {
  FLASHPS_REQUIRE_FIXTURE(single, "single_file_sd_inpaint_tiny");
  test::TempDir dir;
  const std::string folder = test::tiny_sd_folder(*test::fixtures_root(), dir, 9);
  const std::string stored = (single / "sd_inpaint_tiny.safetensors").string();
  fs::create_directories(dir.path() / "alone");
  const std::string file = (dir.path() / "alone" / "model.safetensors").string();
  write_carried_copy(stored, folder, file, false);
  CHECK_THROWS_WITH(load_model(file), Catch::Contains("no tokenizer/ folder beside the file") &&
                                          Catch::Contains("--tokenizers"));
  ModelLoadOptions options;
  options.files.tokenizers_dir = folder;
  CHECK(load_model(file, options)->capabilities().takes_text);

  const std::string no_vae = dir.file("no_vae.safetensors");
  write_carried_copy(stored, folder, no_vae, true, "first_stage_model.");
  CHECK_THROWS_WITH(load_model(no_vae), Catch::Contains("no VAE in this file: pass --vae"));
  // The VAE given beside it, as a file in LDM keys (the fixture's first_stage_model.* cut out).
  const auto whole = SafetensorsFile::open(stored);
  SafetensorsWriter vae;
  for (const TensorInfo& tensor : whole->tensors())
    if (tensor.name.rfind("first_stage_model.", 0) == 0)
      vae.add(tensor.name.substr(18), tensor.dtype, tensor.shape, whole->data(tensor), tensor.byte_size());
  vae.write(dir.file("vae.safetensors"));
  ModelLoadOptions with_vae;
  with_vae.files.vae = dir.file("vae.safetensors");
  const auto completed = load_model(no_vae, with_vae);
  const auto original = load_model(folder);
  const Image image = test::gradient_image(64, 64);
  EditRequest request = test::request_for(image, test::box_mask(64, 64, 8, 8, 24), 5, 2);
  request.mode = CacheMode::full;
  CHECK(completed->new_pipeline(nullptr)->edit(request).image.pixels ==
        original->new_pipeline(nullptr)->edit(request).image.pixels);

  const std::string no_text = dir.file("no_text.safetensors");
  write_carried_copy(stored, folder, no_text, true, "cond_stage_model.");
  CHECK_THROWS_WITH(load_model(no_text), Catch::Contains("no text encoder in this file: pass --text-encoder"));
}
