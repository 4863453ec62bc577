// Whole models from single files: a FlashPS-written Flux file (configs carried in "flashps.files")
// edits exactly as the folder it was written from; the fingerprint covers the weights as stored.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"
#include "core/files/gguf_file.h"
#include "core/files/json_file.h"
#include "core/files/safetensors.h"
#include "models/loading/model_files.h"
#include "pipeline/family_registry.h"
#include "pipeline/model_description.h"
#include "pipeline/single_file_fingerprint.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"
#include "support/tiny_pipeline.h"

using namespace flashps;
namespace fs = std::filesystem;

namespace {

std::string file_text(const fs::path& path) { return read_json_file(path.string()).dump(); }

// The folder's transformer (diffusers keys under ComfyUI's "model.diffusion_model.") and stored
// empty prompt in one file carrying its configs, as FlashPS writes single files; no VAE.
// `changed_tensor`: a tensor whose first value is changed (another file of the same layout).
void write_flux_single_file(const std::string& folder, const std::string& path,
                            const std::string& changed_tensor = "") {
  SafetensorsWriter writer;
  for (const auto& weights : open_component_weights(folder + "/transformer"))
    for (const TensorInfo& tensor : weights->tensors()) {
      std::vector<uint8_t> bytes(weights->data(tensor), weights->data(tensor) + tensor.byte_size());
      if (tensor.name == changed_tensor) bytes[0] ^= 0x40;
      writer.add("model.diffusion_model." + tensor.name, tensor.dtype, tensor.shape, bytes.data(), bytes.size());
    }
  const auto prompt = SafetensorsFile::open(folder + "/empty_prompt_embeds.safetensors");
  for (const TensorInfo& tensor : prompt->tensors())
    writer.add("flashps.empty_prompt." + tensor.name, tensor.dtype, tensor.shape, prompt->data(tensor),
               tensor.byte_size());
  nlohmann::json carried;
  for (const char* file : {"model_index.json", "transformer/config.json", "vae/config.json",
                           "scheduler/scheduler_config.json"})
    carried[file] = file_text(fs::path(folder) / file);
  writer.set_metadata("flashps.files", carried.dump());
  writer.write(path);
}

std::string fingerprint_of(const std::string& path, const ModelFiles& files = {}) {
  return single_file_fingerprint(ModelSource::read(path, files));
}

}  // namespace

TEST_CASE("single files: a FlashPS-written Flux file edits bit-identically to its folder", "[model_files][pipeline]") {
  test::TempDir dir;
  const std::string folder = test::tiny_model(dir);
  const std::string file = dir.file("tiny.safetensors");
  write_flux_single_file(folder, file);

  ModelLoadOptions options;
  options.files.vae = folder + "/vae";  // a diffusers vae/ folder beside the file
  const ModelSource source = ModelSource::read(file, options.files);
  CHECK(source.recognised.written_by_flashps);
  CHECK(detect_model_family(source).name == "flux");
  const auto from_file = load_model(file, options);
  const auto from_folder = load_model(folder);
  CHECK(from_file->model_dir() == file);
  CHECK(from_file->files().vae == folder + "/vae");
  CHECK(from_file->fingerprint() != from_folder->fingerprint());  // another identity: captures never mix
  // model info shows the fingerprint the loaded model has, without loading it.
  CHECK(inspect_model(file, options.files)["fingerprint"] == from_file->fingerprint());
  CHECK(inspect_model(folder)["fingerprint"] == from_folder->fingerprint());

  const Image image = test::gradient_image(64, 48);
  EditRequest request = test::request_for(image, test::box_mask(64, 48, 16, 16, 20), 7);
  request.mode = CacheMode::full;
  const EditResult a = from_file->new_pipeline(nullptr)->edit(request);
  const EditResult b = from_folder->new_pipeline(nullptr)->edit(request);
  CHECK(a.image.pixels == b.image.pixels);

  // Without the VAE, the error says which flag completes the model.
  CHECK_THROWS_WITH(load_model(file), Catch::Contains("no VAE in this file: pass --vae"));
  // Component files belong to single files; a folder has its own.
  CHECK_THROWS_WITH(load_model(folder, options), Catch::Contains("apply to single-file models"));
  CHECK_THROWS_WITH(ModelSource::read(file, {dir.file("missing.safetensors")}),
                    Catch::Contains("--vae") && Catch::Contains("does not exist"));
}

TEST_CASE("single files: the fingerprint covers every stored tensor and the files beside it", "[model_files]") {
  test::TempDir dir;
  const std::string folder = test::tiny_model(dir);
  write_flux_single_file(folder, dir.file("a.safetensors"));
  write_flux_single_file(folder, dir.file("a_again.safetensors"));
  write_flux_single_file(folder, dir.file("b.safetensors"), "single_transformer_blocks.1.proj_out.weight");

  const std::string a = fingerprint_of(dir.file("a.safetensors"));
  CHECK(a == fingerprint_of(dir.file("a_again.safetensors")));  // same bytes, another name: same weights
  CHECK(a != fingerprint_of(dir.file("b.safetensors")));        // one tensor differs
  CHECK(a != fingerprint_of(dir.file("a.safetensors"), {folder + "/vae"}));  // a VAE given beside it
}

TEST_CASE("single files: the same weights stored as F16 and as Q8_0 have different fingerprints", "[model_files][fixtures]") {
  FLASHPS_REQUIRE_FIXTURE(gguf, "gguf_flux_fill_tiny");
  std::map<std::string, std::string> by_file;
  for (const auto& entry : fs::directory_iterator(gguf))
    if (entry.path().extension() == ".gguf") by_file[entry.path().filename().string()] = fingerprint_of(entry.path().string());
  REQUIRE(by_file.size() >= 2);
  std::set<std::string> distinct;
  for (const auto& [file, fingerprint] : by_file) distinct.insert(fingerprint);
  CHECK(distinct.size() == by_file.size());
}

TEST_CASE("single files: model info describes the fixture files without loading them", "[model_files][fixtures]") {
  FLASHPS_REQUIRE_FIXTURE(sd, "single_file_sd_inpaint_tiny");
  for (const auto& entry : fs::directory_iterator(sd)) {
    if (entry.path().extension() != ".safetensors" || entry.path().filename().string().rfind("cases", 0) == 0) continue;
    const nlohmann::json info = inspect_model(entry.path().string());
    CHECK(info["family"] == "stable-diffusion");
    CHECK(info["variant"] == "sd15-inpaint");
    CHECK(info["components"]["vae"]["present"] == true);
    CHECK(info["components"]["tokenizer"]["present"] == false);
    CHECK_THAT(info["components"]["tokenizer"]["message"].get<std::string>(), Catch::Contains("--tokenizers"));
    int64_t parameters = 0;
    for (const auto& group : info["tensor_groups"]) parameters += group["parameters"].get<int64_t>();
    CHECK(info["parameters"].get<int64_t>() == parameters);
    CHECK(info["fingerprint"].is_string());
  }
}
