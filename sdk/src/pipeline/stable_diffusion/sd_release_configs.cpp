// Stable Diffusion 1.5, 2 (base 512 epsilon, 2.1 768 v-prediction, inpainting) and XL (base,
// inpainting 0.1): the configs of the diffusers repositories diffusers' single-file loader
// takes them from (DIFFUSERS_DEFAULT_PIPELINE_PATHS).
#include <string>

#include "pipeline/release_configs.h"

namespace flashps {
namespace {

bool sd_release_is(const ModelType& type, const char* name) { return std::string(type.name) == name; }
bool sd_release_is_sd2(const ModelType& type) { return std::string(type.name).rfind("sd2", 0) == 0; }
bool sd_release_is_xl(const ModelType& type) { return std::string(type.name).rfind("sdxl", 0) == 0; }
bool sd_release_is_inpaint(const ModelType& type) { return std::string(type.name).find("inpaint") != std::string::npos; }

nlohmann::json sd_release_unet(const ModelType& type) {
  nlohmann::json config = {{"_class_name", "UNet2DConditionModel"},
                           {"act_fn", "silu"},
                           {"center_input_sample", false},
                           {"downsample_padding", 1},
                           {"flip_sin_to_cos", true},
                           {"freq_shift", 0},
                           {"in_channels", sd_release_is_inpaint(type) ? 9 : 4},
                           {"layers_per_block", 2},
                           {"mid_block_scale_factor", 1},
                           {"norm_eps", 1e-05},
                           {"norm_num_groups", 32},
                           {"out_channels", 4}};
  if (sd_release_is_xl(type)) {
    config["addition_embed_type"] = "text_time";
    config["addition_embed_type_num_heads"] = 64;
    config["addition_time_embed_dim"] = 256;
    config["attention_head_dim"] = {5, 10, 20};
    config["block_out_channels"] = {320, 640, 1280};
    config["cross_attention_dim"] = 2048;
    config["down_block_types"] = {"DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"};
    config["up_block_types"] = {"CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"};
    config["projection_class_embeddings_input_dim"] = 2816;
    config["sample_size"] = 128;
    config["transformer_layers_per_block"] = {1, 2, 10};
    config["use_linear_projection"] = true;
    return config;
  }
  config["block_out_channels"] = {320, 640, 1280, 1280};
  config["down_block_types"] = {"CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D",
                                "DownBlock2D"};
  config["up_block_types"] = {"UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"};
  if (sd_release_is_sd2(type)) {
    config["attention_head_dim"] = {5, 10, 20, 20};
    config["cross_attention_dim"] = 1024;
    config["use_linear_projection"] = true;
    config["sample_size"] = sd_release_is(type, "sd2-v") ? 96 : 64;
    // stable-diffusion-2-1 computes attention in float32 under float16 weights.
    config["upcast_attention"] = sd_release_is(type, "sd2-v");
  } else {
    config["attention_head_dim"] = 8;
    config["cross_attention_dim"] = 768;
    config["sample_size"] = 64;
  }
  return config;
}

nlohmann::json sd_release_vae(const ModelType& type) {
  const std::vector<std::string> down(4, "DownEncoderBlock2D"), up(4, "UpDecoderBlock2D");
  const int sample_size = sd_release_is_xl(type) ? 1024 : sd_release_is(type, "sd2-v") ? 768 : 512;
  return {{"_class_name", "AutoencoderKL"},
          {"act_fn", "silu"},
          {"block_out_channels", {128, 256, 512, 512}},
          {"down_block_types", down},
          {"force_upcast", sd_release_is_xl(type)},
          {"in_channels", 3},
          {"latent_channels", 4},
          {"layers_per_block", 2},
          {"norm_num_groups", 32},
          {"out_channels", 3},
          {"sample_size", sample_size},
          {"scaling_factor", sd_release_is_xl(type) ? 0.13025 : 0.18215},
          {"up_block_types", up}};
}

nlohmann::json sd_release_clip_text(const char* class_name, const char* act, int hidden, int intermediate, int heads,
                         int layers, int projection) {
  return {{"_class_name", class_name},     {"architectures", {class_name}},
          {"attention_dropout", 0.0},      {"bos_token_id", 0},
          {"dropout", 0.0},                {"eos_token_id", 2},
          {"hidden_act", act},             {"hidden_size", hidden},
          {"initializer_factor", 1.0},     {"initializer_range", 0.02},
          {"intermediate_size", intermediate}, {"layer_norm_eps", 1e-05},
          {"max_position_embeddings", 77}, {"model_type", "clip_text_model"},
          {"num_attention_heads", heads},  {"num_hidden_layers", layers},
          {"pad_token_id", 1},             {"projection_dim", projection},
          {"vocab_size", 49408}};
}

nlohmann::json sd_release_text_encoder(const ModelType& type) {
  // SD 2: OpenCLIP ViT-H/14 (its last layer dropped: 23 of 24); SD 1 and XL: CLIP ViT-L/14.
  if (sd_release_is_sd2(type)) return sd_release_clip_text("CLIPTextModel", "gelu", 1024, 4096, 16, 23, 512);
  return sd_release_clip_text("CLIPTextModel", "quick_gelu", 768, 3072, 12, 12, 768);
}

// SDXL's second encoder: OpenCLIP ViT-bigG/14 with its projection.
nlohmann::json sd_release_text_encoder_2() { return sd_release_clip_text("CLIPTextModelWithProjection", "gelu", 1280, 5120, 20, 32, 1280); }

nlohmann::json sd_release_scheduler(const ModelType& type) {
  nlohmann::json config = {{"beta_end", 0.012},         {"beta_schedule", "scaled_linear"},
                           {"beta_start", 0.00085},     {"clip_sample", false},
                           {"num_train_timesteps", 1000}, {"set_alpha_to_one", false},
                           {"steps_offset", 1},         {"trained_betas", nullptr}};
  if (sd_release_is_xl(type)) {
    config["_class_name"] = "EulerDiscreteScheduler";
    config["interpolation_type"] = "linear";
    config["prediction_type"] = "epsilon";
    config["timestep_spacing"] = "leading";
    config["use_karras_sigmas"] = false;
    config.erase("clip_sample");
  } else if (sd_release_is(type, "sd2-v")) {
    config["_class_name"] = "DDIMScheduler";
    config["prediction_type"] = "v_prediction";
  } else {
    config["_class_name"] = "PNDMScheduler";
    config["prediction_type"] = "epsilon";
    config["skip_prk_steps"] = true;
  }
  return config;
}

nlohmann::json sd_release_model_index(const ModelType& type) {
  nlohmann::json index = {{"_class_name", type.pipeline_class},
                          {"scheduler", {"diffusers", sd_release_scheduler(type)["_class_name"]}},
                          {"text_encoder", {"transformers", "CLIPTextModel"}},
                          {"tokenizer", {"transformers", "CLIPTokenizer"}},
                          {"unet", {"diffusers", "UNet2DConditionModel"}},
                          {"vae", {"diffusers", "AutoencoderKL"}}};
  if (sd_release_is_xl(type)) {
    index["text_encoder_2"] = {"transformers", "CLIPTextModelWithProjection"};
    index["tokenizer_2"] = {"transformers", "CLIPTokenizer"};
    index["force_zeros_for_empty_prompt"] = true;
  }
  return index;
}

}  // namespace

nlohmann::json sd_release_file(const ModelType& type, const std::string& relative) {
  if (std::string(type.family) != "stable-diffusion") return nullptr;
  if (relative == "model_index.json") return sd_release_model_index(type);
  if (relative == "unet/config.json") return sd_release_unet(type);
  if (relative == "vae/config.json") return sd_release_vae(type);
  if (relative == "text_encoder/config.json") return sd_release_text_encoder(type);
  if (relative == "text_encoder_2/config.json") return sd_release_is_xl(type) ? sd_release_text_encoder_2() : nlohmann::json(nullptr);
  if (relative == "scheduler/scheduler_config.json") return sd_release_scheduler(type);
  return nullptr;
}

}  // namespace flashps
