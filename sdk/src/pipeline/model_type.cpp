#include "pipeline/model_type.h"

#include "core/diagnostics/error.h"
#include "pipeline/release_configs.h"

namespace flashps {
namespace {

const std::vector<ModelType> kModelTypes = {
    {"sd15", "stable-diffusion", "StableDiffusionPipeline", "stable-diffusion-v1-5/stable-diffusion-v1-5",
     "Stable Diffusion 1.x (512 px)"},
    {"sd15-inpaint", "stable-diffusion", "StableDiffusionInpaintPipeline",
     "stable-diffusion-v1-5/stable-diffusion-inpainting", "Stable Diffusion 1.x inpainting (9-channel UNet)"},
    {"sd2", "stable-diffusion", "StableDiffusionPipeline", "stabilityai/stable-diffusion-2-base",
     "Stable Diffusion 2.x base (512 px, epsilon prediction)"},
    {"sd2-v", "stable-diffusion", "StableDiffusionPipeline", "stabilityai/stable-diffusion-2-1",
     "Stable Diffusion 2.x (768 px, v-prediction; what an SD 2 file is taken for unless --model-type sd2, as in "
     "diffusers)"},
    {"sd2-inpaint", "stable-diffusion", "StableDiffusionInpaintPipeline", "stabilityai/stable-diffusion-2-inpainting",
     "Stable Diffusion 2.x inpainting (9-channel UNet, 512 px)"},
    {"sdxl", "stable-diffusion", "StableDiffusionXLPipeline", "stabilityai/stable-diffusion-xl-base-1.0",
     "Stable Diffusion XL base (1024 px)"},
    {"sdxl-inpaint", "stable-diffusion", "StableDiffusionXLInpaintPipeline",
     "diffusers/stable-diffusion-xl-1.0-inpainting-0.1", "Stable Diffusion XL inpainting (9-channel UNet)"},
    {"flux-dev", "flux", "FluxPipeline", "black-forest-labs/FLUX.1-dev",
     "FLUX.1 dev (guidance-distilled; Flux Kontext files have the same keys and are taken for dev: FlashPS does "
     "not support Kontext)"},
    {"flux-schnell", "flux", "FluxPipeline", "black-forest-labs/FLUX.1-schnell",
     "FLUX.1 schnell (timestep-distilled, no guidance input)"},
    {"flux-fill", "flux", "FluxFillPipeline", "black-forest-labs/FLUX.1-Fill-dev",
     "FLUX.1 Fill dev (inpainting: masked-image latents and mask as extra input channels)"},
};

using RecognitionEntries = std::map<std::string, CheckpointEntry>;

const CheckpointEntry* tensor_entry_of(const RecognitionEntries& entries, const std::string& key) {
  const auto found = entries.find(key);
  return found == entries.end() ? nullptr : &found->second;
}

bool listing_has_prefix(const RecognitionEntries& entries, const std::string& prefix) {
  const auto first = entries.lower_bound(prefix);
  return first != entries.end() && first->first.compare(0, prefix.size(), prefix) == 0;
}

bool listing_key_contains(const RecognitionEntries& entries, const std::string& part) {
  for (const auto& [key, unused] : entries)
    if (key.find(part) != std::string::npos) return true;
  return false;
}

int64_t shape_dim(const CheckpointEntry* tensor, int index) {
  if (!tensor || tensor->shape.empty()) return -1;
  const int rank = static_cast<int>(tensor->shape.size());
  const int at = index < 0 ? rank + index : index;
  return at >= 0 && at < rank ? tensor->shape[at] : -1;
}

[[noreturn]] void refuse_as(const CheckpointSource& file, const std::string& looks_like, const std::string& advice = "") {
  throw UnsupportedError(file.path + ": looks like " + looks_like + ", which FlashPS does not load as a model" +
                         (advice.empty() ? "" : "; " + advice) + " (model files it loads: " + model_type_names() +
                         ")");
}

// Families and parts FlashPS does not load, by the keys that give them away.
void refuse_unsupported(const CheckpointSource& file, const RecognitionEntries& entries) {
  if (listing_key_contains(entries, "joint_blocks."))
    refuse_as(file, "Stable Diffusion 3 / 3.5 (an MMDiT transformer: joint_blocks.* keys)");
  if (listing_key_contains(entries, "lora_down") || listing_key_contains(entries, "lora_up") ||
      listing_key_contains(entries, ".lora_A.") || listing_key_contains(entries, ".lora_B.") || listing_has_prefix(entries, "lora_"))
    refuse_as(file, "a LoRA (lora_* keys: low-rank weight changes, not a whole model)",
           "pass the model it was trained on with --model");
  if (listing_has_prefix(entries, "control_model.") || listing_has_prefix(entries, "controlnet_cond_embedding."))
    refuse_as(file, "a ControlNet (control_model.* / controlnet_cond_embedding.* keys)");
  for (const char* flux2 : {"single_stream_modulation.", "model.diffusion_model.single_stream_modulation."})
    if (listing_has_prefix(entries, flux2)) refuse_as(file, "FLUX.2 (single_stream_modulation.* keys)");
  for (const char* chroma : {"distilled_guidance_layer.", "model.diffusion_model.distilled_guidance_layer."})
    if (listing_has_prefix(entries, chroma)) refuse_as(file, "Chroma (a Flux derivative: distilled_guidance_layer.* keys)");
}

// The parts a component file holds on its own, for the refusal of a file passed as a model.
void refuse_component_alone(const CheckpointSource& file, const RecognitionEntries& entries) {
  const bool ldm_vae = listing_has_prefix(entries, "encoder.down.") || listing_has_prefix(entries, "decoder.up.");
  const bool diffusers_vae = listing_has_prefix(entries, "encoder.down_blocks.") && listing_has_prefix(entries, "decoder.up_blocks.");
  if (ldm_vae || diffusers_vae)
    refuse_as(file, "a VAE alone (autoencoder keys encoder.* / decoder.*)",
           "pass it with --vae beside the model file");
  if (listing_has_prefix(entries, "text_model.") || listing_has_prefix(entries, "transformer.resblocks."))
    refuse_as(file, "a CLIP text encoder alone (text_model.* keys)",
           "pass it with --text-encoder (CLIP-L) or --text-encoder-2 (SDXL's CLIP-G) beside the model file");
  if (listing_has_prefix(entries, "encoder.block.") || entries.count("shared.weight"))
    refuse_as(file, "a T5 text encoder alone (encoder.block.* keys)",
           "pass it with --text-encoder-2 beside a Flux model file");
}

// Flux, in Black Forest Labs' keys (bare or under model.diffusion_model.) or diffusers' keys.
std::optional<std::string> recognise_flux(const CheckpointSource& file, const RecognitionEntries& entries,
                                          RecognisedFile& recognised) {
  for (const std::string prefix : {"", "model.diffusion_model."}) {
    const bool bfl = entries.count(prefix + "img_in.weight") && listing_has_prefix(entries, prefix + "double_blocks.");
    const bool diffusers =
        entries.count(prefix + "x_embedder.weight") && listing_has_prefix(entries, prefix + "single_transformer_blocks.");
    if (!bfl && !diffusers) continue;
    recognised.components.denoiser = prefix;
    recognised.layout = bfl ? "Black Forest Labs (double_blocks / single_blocks)" : "diffusers (transformer_blocks)";
    const int64_t in = shape_dim(tensor_entry_of(entries, prefix + (bfl ? "img_in.weight" : "x_embedder.weight")), 1);
    const int64_t out = shape_dim(tensor_entry_of(entries, prefix + (bfl ? "final_layer.linear.weight" : "proj_out.weight")), 0);
    const bool guidance = bfl ? listing_has_prefix(entries, prefix + "guidance_in.")
                              : listing_has_prefix(entries, prefix + "time_text_embed.guidance_embedder.");
    // diffusers: img_in width 384 = Fill (64 latent + 64 masked-image latent + 256 packed-mask
    // channels), 128 = Depth. Put generally: more than twice the output = Fill; twice = a control image.
    if (in > 2 * out && out > 0) return "flux-fill";
    if (in == 2 * out && out > 0)
      refuse_as(file, "FLUX.1 Depth or Canny (a control image as extra input channels: img_in width " +
                       std::to_string(in) + ")");
    if (in != out || out <= 0)
      refuse_as(file, "a Flux transformer with an unknown input layout (img_in width " + std::to_string(in) +
                       ", output width " + std::to_string(out) + ")");
    return guidance ? "flux-dev" : "flux-schnell";
  }
  return std::nullopt;
}

// Stable Diffusion 1.x / 2.x / XL in the original (LDM / SGM) layout.
std::optional<std::string> recognise_stable_diffusion(const CheckpointSource& file, const RecognitionEntries& entries,
                                                      RecognisedFile& recognised) {
  const CheckpointEntry* conv_in = tensor_entry_of(entries, "model.diffusion_model.input_blocks.0.0.weight");
  if (!conv_in) return std::nullopt;
  recognised.components.denoiser = "model.diffusion_model.";
  recognised.layout = "LDM (original Stable Diffusion keys)";
  const int64_t in = shape_dim(conv_in, 1);
  if (in != 4 && in != 9) {
    const std::string what = in == 8   ? "InstructPix2Pix (an 8-channel UNet)"
                             : in == 5 ? "Stable Diffusion depth-to-image (a 5-channel UNet)"
                             : in == 7 ? "a Stable Diffusion upscaler (a 7-channel UNet)"
                                       : "a " + std::to_string(in) + "-channel Stable Diffusion UNet";
    refuse_as(file, what, "FlashPS loads 4-channel (plain) and 9-channel (inpainting) UNets");
  }
  const bool inpaint = in == 9;
  if (listing_has_prefix(entries, "model.diffusion_model.label_emb.") || listing_has_prefix(entries, "conditioner.embedders.")) {
    recognised.layout = "SGM (original Stable Diffusion XL keys)";
    if (listing_has_prefix(entries, "conditioner.embedders.0.model.") && !listing_has_prefix(entries, "conditioner.embedders.1."))
      refuse_as(file, "the Stable Diffusion XL refiner (one OpenCLIP text encoder, no CLIP-L)");
    if (listing_has_prefix(entries, "conditioner.embedders.0.")) recognised.components.text_encoder = "conditioner.embedders.0.";
    if (listing_has_prefix(entries, "conditioner.embedders.1.")) recognised.components.text_encoder_2 = "conditioner.embedders.1.";
    return inpaint ? "sdxl-inpaint" : "sdxl";
  }
  // SD 2 has OpenCLIP ViT-H (1024 wide) where SD 1 has CLIP-L (768): the text encoder's keys, or
  // the width of the UNet's cross-attention (diffusers reads input_blocks.2.1's attn2.to_k).
  bool sd2 = listing_has_prefix(entries, "cond_stage_model.model.");
  for (const auto& [key, tensor] : entries)
    if (key.rfind("model.diffusion_model.input_blocks.", 0) == 0 &&
        key.find(".transformer_blocks.0.attn2.to_k.weight") != std::string::npos) {
      sd2 = sd2 || shape_dim(&tensor, -1) == 1024;
      break;
    }
  if (listing_has_prefix(entries, "cond_stage_model.")) recognised.components.text_encoder = "cond_stage_model.";
  if (sd2) return inpaint ? "sd2-inpaint" : "sd2-v";
  return inpaint ? "sd15-inpaint" : "sd15";
}

}  // namespace

const std::vector<ModelType>& model_types() { return kModelTypes; }

const ModelType* find_model_type(const std::string& name) {
  for (const ModelType& type : kModelTypes)
    if (name == type.name) return &type;
  return nullptr;
}

std::string model_type_names() {
  std::string names;
  for (const ModelType& type : kModelTypes) names += (names.empty() ? "" : ", ") + std::string(type.name);
  return names;
}

RecognisedFile recognise_checkpoint(const CheckpointSource& file, const std::string& model_type) {
  const RecognitionEntries& entries = file.tensors->entries();
  RecognisedFile recognised;
  recognised.written_by_flashps = !file.carried_files.is_null();
  refuse_unsupported(file, entries);
  std::optional<std::string> found = recognise_flux(file, entries, recognised);
  if (found) {
    // ComfyUI's all-in-one Flux checkpoints; the split files (as downloaded) hold the transformer alone.
    if (listing_has_prefix(entries, "vae.")) recognised.components.vae = "vae.";
    if (listing_has_prefix(entries, "text_encoders.clip_l.")) recognised.components.text_encoder = "text_encoders.clip_l.";
    if (listing_has_prefix(entries, "text_encoders.t5xxl.")) recognised.components.text_encoder_2 = "text_encoders.t5xxl.";
  } else {
    found = recognise_stable_diffusion(file, entries, recognised);
    if (found && listing_has_prefix(entries, "first_stage_model.")) recognised.components.vae = "first_stage_model.";
  }
  if (!found) {
    refuse_component_alone(file, entries);
    const std::string first = entries.empty() ? "none" : "\"" + entries.begin()->first + "\"";
    throw UnsupportedError(file.path + ": no supported model recognised in its " + std::to_string(entries.size()) +
                           " tensors (the first key is " + first + "); FlashPS loads diffusers folders and single "
                           "files of: " + model_type_names());
  }
  recognised.type = find_model_type(*found);
  if (!model_type.empty()) {
    const ModelType* given = find_model_type(model_type);
    if (!given)
      throw InvalidArgumentError("--model-type: unknown type \"" + model_type + "\"; one of: " + model_type_names());
    if (std::string(given->family) != recognised.type->family)
      throw InvalidArgumentError("--model-type " + model_type + ": " + file.path + " holds a " +
                                 recognised.type->family + " model (recognised as " + recognised.type->name +
                                 "), not a " + given->family + " one");
    recognised.type = given;
    recognised.type_given = true;
  }
  return recognised;
}

nlohmann::json release_file(const ModelType& type, const std::string& relative) {
  return std::string(type.family) == "flux" ? flux_release_file(type, relative) : sd_release_file(type, relative);
}

}  // namespace flashps
