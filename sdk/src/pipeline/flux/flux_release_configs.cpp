// FLUX.1 dev, schnell and Fill dev: the configs of black-forest-labs' diffusers repositories.
#include <string>

#include "pipeline/release_configs.h"

namespace flashps {
namespace {

nlohmann::json release_flux_transformer(const std::string& name) {
  return {{"_class_name", "FluxTransformer2DModel"},
          {"attention_head_dim", 128},
          {"axes_dims_rope", {16, 56, 56}},
          {"guidance_embeds", name != "flux-schnell"},
          {"in_channels", name == "flux-fill" ? 384 : 64},
          {"joint_attention_dim", 4096},
          {"num_attention_heads", 24},
          {"num_layers", 19},
          {"num_single_layers", 38},
          {"out_channels", name == "flux-fill" ? nlohmann::json(64) : nlohmann::json(nullptr)},
          {"patch_size", 1},
          {"pooled_projection_dim", 768}};
}

nlohmann::json release_flux_vae() {
  const std::vector<std::string> down(4, "DownEncoderBlock2D"), up(4, "UpDecoderBlock2D");
  return {{"_class_name", "AutoencoderKL"},
          {"act_fn", "silu"},
          {"block_out_channels", {128, 256, 512, 512}},
          {"down_block_types", down},
          {"force_upcast", true},
          {"in_channels", 3},
          {"latent_channels", 16},
          {"latents_mean", nullptr},
          {"latents_std", nullptr},
          {"layers_per_block", 2},
          {"mid_block_add_attention", true},
          {"norm_num_groups", 32},
          {"out_channels", 3},
          {"sample_size", 1024},
          {"scaling_factor", 0.3611},
          {"shift_factor", 0.1159},
          {"up_block_types", up},
          {"use_post_quant_conv", false},
          {"use_quant_conv", false}};
}

nlohmann::json release_flux_scheduler(const std::string& name) {
  const bool schnell = name == "flux-schnell";
  return {{"_class_name", "FlowMatchEulerDiscreteScheduler"},
          {"base_image_seq_len", 256},
          {"base_shift", 0.5},
          {"max_image_seq_len", 4096},
          {"max_shift", 1.15},
          {"num_train_timesteps", 1000},
          {"shift", schnell ? 1.0 : 3.0},
          {"use_dynamic_shifting", !schnell}};
}

// openai/clip-vit-large-patch14's text model.
nlohmann::json release_clip_l() {
  return {{"_class_name", "CLIPTextModel"}, {"architectures", {"CLIPTextModel"}},
          {"attention_dropout", 0.0},       {"bos_token_id", 0},
          {"dropout", 0.0},                 {"eos_token_id", 2},
          {"hidden_act", "quick_gelu"},     {"hidden_size", 768},
          {"initializer_factor", 1.0},      {"initializer_range", 0.02},
          {"intermediate_size", 3072},      {"layer_norm_eps", 1e-05},
          {"max_position_embeddings", 77},  {"model_type", "clip_text_model"},
          {"num_attention_heads", 12},      {"num_hidden_layers", 12},
          {"pad_token_id", 1},              {"projection_dim", 768},
          {"vocab_size", 49408}};
}

// google/t5-v1_1-xxl's encoder.
nlohmann::json release_t5_xxl() {
  return {{"_class_name", "T5EncoderModel"},
          {"architectures", {"T5EncoderModel"}},
          {"d_ff", 10240},
          {"d_kv", 64},
          {"d_model", 4096},
          {"dense_act_fn", "gelu_new"},
          {"dropout_rate", 0.1},
          {"eos_token_id", 1},
          {"feed_forward_proj", "gated-gelu"},
          {"initializer_factor", 1.0},
          {"is_encoder_decoder", true},
          {"is_gated_act", true},
          {"layer_norm_epsilon", 1e-06},
          {"model_type", "t5"},
          {"num_decoder_layers", 24},
          {"num_heads", 64},
          {"num_layers", 24},
          {"pad_token_id", 0},
          {"relative_attention_max_distance", 128},
          {"relative_attention_num_buckets", 32},
          {"tie_word_embeddings", false},
          {"vocab_size", 32128}};
}

nlohmann::json release_flux_model_index(const ModelType& type) {
  nlohmann::json index = {{"_class_name", type.pipeline_class},
                          {"scheduler", {"diffusers", "FlowMatchEulerDiscreteScheduler"}},
                          {"text_encoder", {"transformers", "CLIPTextModel"}},
                          {"text_encoder_2", {"transformers", "T5EncoderModel"}},
                          {"tokenizer", {"transformers", "CLIPTokenizer"}},
                          {"tokenizer_2", {"transformers", "T5TokenizerFast"}},
                          {"transformer", {"diffusers", "FluxTransformer2DModel"}},
                          {"vae", {"diffusers", "AutoencoderKL"}}};
  // Steps of a request that names none: schnell is distilled for 4; FluxFillPipeline's default is 50.
  if (std::string(type.name) == "flux-schnell") index["_flashps_default_steps"] = 4;
  if (std::string(type.name) == "flux-fill") index["_flashps_default_steps"] = 50;
  return index;
}

}  // namespace

nlohmann::json flux_release_file(const ModelType& type, const std::string& relative) {
  const std::string name = type.name;
  if (std::string(type.family) != "flux") return nullptr;
  if (relative == "model_index.json") return release_flux_model_index(type);
  if (relative == "transformer/config.json") return release_flux_transformer(name);
  if (relative == "vae/config.json") return release_flux_vae();
  if (relative == "scheduler/scheduler_config.json") return release_flux_scheduler(name);
  if (relative == "text_encoder/config.json") return release_clip_l();
  if (relative == "text_encoder_2/config.json") return release_t5_xxl();
  return nullptr;
}

}  // namespace flashps
