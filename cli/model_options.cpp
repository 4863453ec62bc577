#include "model_options.h"

namespace flashps::cli {

void add_model_options(CLI::App* command, ModelPathOptions& options) {
  command->add_option("--model", options.model,
                      "Model: a diffusers folder, a single-file .safetensors checkpoint (Stable Diffusion 1.x/2.x/XL, "
                      "Flux) or a .gguf file; default: bundled model");
  command->add_option("--vae", options.vae,
                      "VAE file beside a single-file model (Flux: ae.safetensors), or a diffusers vae/ folder");
  command->add_option("--text-encoder", options.text_encoder,
                      "CLIP-L text encoder file beside a single-file model (clip_l.safetensors)");
  command->add_option("--text-encoder-2", options.text_encoder_2,
                      "Second text encoder file: T5-XXL for Flux (t5xxl_fp16 / t5xxl_fp8_e4m3fn), CLIP-G for SDXL");
  command->add_option("--model-type", options.model_type,
                      "What a single file is when its tensors leave it open: sd15, sd15-inpaint, sd2 (512 px, "
                      "epsilon), sd2-v (768 px, v-prediction; what SD 2 files are taken for), sd2-inpaint, sdxl, "
                      "sdxl-inpaint, flux-dev, flux-schnell, flux-fill (default: recognised from the tensors; Flux "
                      "Kontext files look like flux-dev and are not supported)");
  command->add_option("--tokenizers", options.tokenizers,
                      "A diffusers folder of the model holding tokenizer/ (and tokenizer_2/): single files carry "
                      "none (default: tokenizer/ beside the model file)");
}

sdk::ModelOptions model_open_options(const ModelPathOptions& options) {
  sdk::ModelOptions open;
  open.vae = options.vae;
  open.text_encoder = options.text_encoder;
  open.text_encoder_2 = options.text_encoder_2;
  open.model_type = options.model_type;
  open.tokenizers_dir = options.tokenizers;
  return open;
}

}  // namespace flashps::cli
