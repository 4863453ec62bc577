#include "models/random/random_presets.h"


namespace flashps {
namespace {

// CLIPTextModel's config in transformers' names (legacy eos id: pooled at the largest id).
nlohmann::json preset_clip_json(int64_t vocab, int64_t hidden, int64_t intermediate, int64_t layers, int64_t heads) {
  return {{"_class_name", "CLIPTextModel"}, {"architectures", {"CLIPTextModel"}}, {"vocab_size", vocab},
          {"hidden_size", hidden}, {"intermediate_size", intermediate}, {"num_hidden_layers", layers},
          {"num_attention_heads", heads}, {"max_position_embeddings", 77}, {"hidden_act", "quick_gelu"},
          {"layer_norm_eps", 1e-5}, {"eos_token_id", 2}};
}

nlohmann::json preset_t5_json(int64_t vocab, int64_t d_model, int64_t heads, int64_t d_ff, int64_t layers) {
  return {{"_class_name", "T5EncoderModel"}, {"architectures", {"T5EncoderModel"}}, {"model_type", "t5"},
          {"vocab_size", vocab}, {"d_model", d_model}, {"d_kv", d_model / heads}, {"num_heads", heads},
          {"d_ff", d_ff}, {"num_layers", layers}, {"relative_attention_num_buckets", 32},
          {"relative_attention_max_distance", 128}, {"feed_forward_proj", "gated-gelu"},
          {"layer_norm_epsilon", 1e-6}, {"torch_dtype", "float32"}};
}

}  // namespace

RandomModelPreset flux_fill_dev_preset() {
  RandomModelPreset preset;
  preset.name = "flux-fill-dev";
  preset.file_stem = "flux1-fill-dev";
  preset.spec = small_fill_model_spec();
  FluxConfig& t = preset.spec.transformer;  // black-forest-labs/FLUX.1-Fill-dev transformer/config.json
  t.in_channels = 384;
  t.out_channels = 64;
  t.num_layers = 19;
  t.num_single_layers = 38;
  t.attention_head_dim = 128;
  t.num_attention_heads = 24;
  t.joint_attention_dim = 4096;
  t.pooled_projection_dim = 768;
  t.guidance_embeds = true;
  t.axes_dims_rope = {16, 56, 56};
  preset.spec.vae_config["block_out_channels"] = {128, 256, 512, 512};
  preset.spec.vae_config["layers_per_block"] = 2;
  preset.spec.vae_config["norm_num_groups"] = 32;
  preset.spec.vae_config["sample_size"] = 1024;
  preset.spec.text_tokens = 512;
  preset.spec.max_sequence_length = 512;
  preset.spec.text_encoders = true;
  preset.clip_config = preset_clip_json(49408, 768, 3072, 12, 12);
  preset.t5_config = preset_t5_json(32128, 4096, 64, 10240, 24);
  return preset;
}

RandomModelPreset small_flux_fill_preset(const std::string& name, const FluxConfig& transformer) {
  RandomModelPreset preset;
  preset.name = name;
  preset.file_stem = name;
  preset.spec = small_fill_model_spec();
  preset.spec.transformer = transformer;
  preset.spec.text_tokens = 64;
  preset.spec.max_sequence_length = 64;
  preset.spec.text_encoders = true;
  preset.clip_config = preset_clip_json(1000, transformer.pooled_projection_dim, 2 * transformer.pooled_projection_dim, 2, 2);
  preset.t5_config = preset_t5_json(256, transformer.joint_attention_dim, 4, 2 * transformer.joint_attention_dim, 2);
  return preset;
}

RandomModelPreset sd15_inpaint_preset() {
  RandomModelPreset preset;
  preset.family = "sd";
  preset.name = "sd15-inpaint";
  preset.file_stem = "sd15-inpainting";
  preset.unet_config = {{"_class_name", "UNet2DConditionModel"},
                        {"in_channels", 9},
                        {"out_channels", 4},
                        {"down_block_types", {"CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"}},
                        {"up_block_types", {"UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"}},
                        {"block_out_channels", {320, 640, 1280, 1280}},
                        {"layers_per_block", 2},
                        {"attention_head_dim", 8},
                        {"cross_attention_dim", 768},
                        {"norm_num_groups", 32},
                        {"sample_size", 64}};
  preset.spec.vae_config = {{"_class_name", "AutoencoderKL"},
                            {"in_channels", 3},
                            {"out_channels", 3},
                            {"block_out_channels", {128, 256, 512, 512}},
                            {"down_block_types", std::vector<std::string>(4, "DownEncoderBlock2D")},
                            {"up_block_types", std::vector<std::string>(4, "UpDecoderBlock2D")},
                            {"layers_per_block", 2},
                            {"latent_channels", 4},
                            {"norm_num_groups", 32},
                            {"scaling_factor", 0.18215},
                            {"sample_size", 512}};
  preset.spec.scheduler_config = {{"_class_name", "PNDMScheduler"}, {"beta_start", 0.00085}, {"beta_end", 0.012},
                                  {"beta_schedule", "scaled_linear"}, {"num_train_timesteps", 1000},
                                  {"skip_prk_steps", true}, {"set_alpha_to_one", false}, {"steps_offset", 1}};
  preset.clip_config = preset_clip_json(49408, 768, 3072, 12, 12);
  return preset;
}

RandomModelPreset sdxl_preset() {
  RandomModelPreset preset = sd15_inpaint_preset();
  preset.name = "sdxl";
  preset.file_stem = "sd_xl_base_1.0";
  preset.unet_config = {{"_class_name", "UNet2DConditionModel"},
                        {"in_channels", 4},
                        {"out_channels", 4},
                        {"down_block_types", {"DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"}},
                        {"up_block_types", {"CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"}},
                        {"block_out_channels", {320, 640, 1280}},
                        {"layers_per_block", 2},
                        {"transformer_layers_per_block", {1, 2, 10}},
                        {"attention_head_dim", {5, 10, 20}},
                        {"cross_attention_dim", 2048},
                        {"use_linear_projection", true},
                        {"addition_embed_type", "text_time"},
                        {"addition_time_embed_dim", 256},
                        {"projection_class_embeddings_input_dim", 2816},
                        {"norm_num_groups", 32},
                        {"sample_size", 128}};
  preset.spec.vae_config["scaling_factor"] = 0.13025;
  preset.spec.vae_config["sample_size"] = 1024;
  preset.spec.scheduler_config = {{"_class_name", "EulerDiscreteScheduler"}, {"beta_start", 0.00085},
                                  {"beta_end", 0.012}, {"beta_schedule", "scaled_linear"},
                                  {"num_train_timesteps", 1000}, {"timestep_spacing", "leading"},
                                  {"steps_offset", 1}, {"interpolation_type", "linear"}};
  preset.clip2_config = preset_clip_json(49408, 1280, 5120, 32, 20);
  preset.clip2_config["_class_name"] = "CLIPTextModelWithProjection";
  preset.clip2_config["architectures"] = {"CLIPTextModelWithProjection"};
  preset.clip2_config["hidden_act"] = "gelu";
  preset.clip2_config["projection_dim"] = 1280;
  return preset;
}

}  // namespace flashps
