// A tiny Stable Diffusion folder (diffusers layout) assembled from the golden fixtures
// (unet_sd_inpaint_tiny, vae_sd_tiny, clip_text_tiny) and a byte-level tokenizer of < 1000 ids,
// for tests of the SD pipeline and of everything that opens SD folders.
#pragma once
#include <ATen/ATen.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/files/json_file.h"
#include "core/files/tensor_io.h"
#include "models/random/random_text_encoders.h"
#include "support/temp_dir.h"

namespace flashps::test {
namespace sd_folder_detail {
namespace fs = std::filesystem;

inline void copy_folder(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  for (const auto& entry : fs::directory_iterator(from))
    if (entry.path().filename() != "cases.json" && entry.path().filename() != "cases.safetensors")
      fs::copy_file(entry.path(), to / entry.path().filename(), fs::copy_options::overwrite_existing);
}

}  // namespace sd_folder_detail

// A tiny SD inpainting folder; `in_channels` 4 turns the UNet into a plain one (conv_in cut).
inline std::string tiny_sd_folder(const std::filesystem::path& fixtures, const TempDir& dir, int in_channels) {
  namespace fs = std::filesystem;
  using namespace sd_folder_detail;
  const fs::path root = dir.path() / ("sd" + std::to_string(in_channels));
  copy_folder(fixtures / "unet_sd_inpaint_tiny", root / "unet");
  copy_folder(fixtures / "vae_sd_tiny", root / "vae");
  copy_folder(fixtures / "clip_text_tiny", root / "text_encoder");
  write_byte_level_clip_tokenizer((root / "tokenizer").string());
  fs::create_directories(root / "scheduler");
  nlohmann::json scheduler = {{"_class_name", "PNDMScheduler"}, {"beta_start", 0.00085}, {"beta_end", 0.012},
                              {"beta_schedule", "scaled_linear"}, {"num_train_timesteps", 1000}, {"skip_prk_steps", true},
                              {"set_alpha_to_one", false}, {"steps_offset", 1}};
  write_json_file((root / "scheduler" / "scheduler_config.json").string(), scheduler);
  if (in_channels == 4) {
    nlohmann::json config = read_json_file((root / "unet" / "config.json").string());
    config["in_channels"] = 4;
    write_json_file((root / "unet" / "config.json").string(), config);
    auto tensors = load_safetensors((root / "unet" / "diffusion_pytorch_model.safetensors").string());
    tensors["conv_in.weight"] = tensors["conv_in.weight"].narrow(1, 0, 4).contiguous();
    save_safetensors((root / "unet" / "diffusion_pytorch_model.safetensors").string(),
                     std::vector<std::pair<std::string, at::Tensor>>(tensors.begin(), tensors.end()));
  }
  write_json_file((root / "model_index.json").string(),
                  {{"_class_name", in_channels == 9 ? "StableDiffusionInpaintPipeline" : "StableDiffusionPipeline"},
                   {"unet", {"diffusers", "UNet2DConditionModel"}}, {"vae", {"diffusers", "AutoencoderKL"}},
                   {"text_encoder", {"transformers", "CLIPTextModel"}}, {"tokenizer", {"transformers", "CLIPTokenizer"}},
                   {"scheduler", {"diffusers", "PNDMScheduler"}}});
  return root.string();
}

}  // namespace flashps::test
