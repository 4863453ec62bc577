// Turning a Flux edit request into tensors: the window and processing size, the mask, the
// prompt embeddings (encoded or given), and the template's capture identity.
#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

#include "core/files/content_hash.h"
#include "core/diagnostics/error.h"
#include "core/mask/mask_ops.h"
#include "pipeline/edit_rules.h"
#include "pipeline/flux/flux_inpaint_prepare.h"
#include "pipeline/image_tensors.h"
#include "pipeline/prepared_mask.h"
#include "pipeline/flux/processing_window.h"

namespace flashps {
namespace {

// Processing sizes are whole Flux tokens (vsf * 2 pixels), as diffusers' image processor rounds.
int round_down_to(int value, int64_t multiple) {
  return static_cast<int>(std::max<int64_t>(multiple, (value / multiple) * multiple));
}

}  // namespace

int64_t FluxInpaintPipeline::vae_scale_factor() const {
  return components_.vae->scale_factor();
}

FluxInpaintPipeline::Prepared FluxInpaintPipeline::prepare(const EditRequest& request, EditStats& stats,
                                                           bool whole_image) const {
  if (request.image.empty()) throw Error("edit request has no image");
  check_image(request.image, "template image");
  rules::check_resolved_steps(request.steps, request.strength);
  Prepared prepared;
  prepared.original = to_rgb(request.image);
  const int width = prepared.original.width, height = prepared.original.height;

  Image original_mask = edit_mask_at(request, width, height, stats.notes);

  const int64_t token_pixels = vae_scale_factor() * 2;
  const int context = request.context_size != 0 ? request.context_size : components_.native_size;
  prepared.window_width = width;
  prepared.window_height = height;
  Image window = prepared.original, window_mask = original_mask;
  const ProcessingWindow region = processing_window(width, height, mask_bounding_box(original_mask), context, whole_image);
  int target_width = region.target_width, target_height = region.target_height;
  if (region.scaled_whole) {
    stats.notes.push_back("image larger than the model's " + std::to_string(context) + "px: processed whole at " +
                          std::to_string(target_width) + "x" + std::to_string(target_height));
  } else if (region.windowed) {
    prepared.window_x = region.x;
    prepared.window_y = region.y;
    prepared.window_width = region.width;
    prepared.window_height = region.height;
    prepared.windowed = true;
    window = crop(prepared.original, prepared.window_x, prepared.window_y, prepared.window_width, prepared.window_height);
    window_mask = crop(original_mask, prepared.window_x, prepared.window_y, prepared.window_width,
                       prepared.window_height);
    std::ostringstream note;
    note << "image larger than the model's " << context << "px: edited through a " << prepared.window_width << "x"
         << prepared.window_height << " window around the mask at (" << prepared.window_x << ", "
         << prepared.window_y << ")";
    if (target_width < region.width) note << ", processed at " << target_width << "x" << target_height;
    stats.notes.push_back(note.str());
  }
  prepared.width = round_down_to(target_width, token_pixels);
  prepared.height = round_down_to(target_height, token_pixels);
  prepared.resized = prepared.width != prepared.window_width || prepared.height != prepared.window_height;
  Image processed = window, processed_mask = window_mask;
  if (prepared.resized) {
    processed = resize_bilinear(window, prepared.width, prepared.height);
    processed_mask = resize_nearest(window_mask, prepared.width, prepared.height);
    if (!prepared.windowed && target_width == width)
      stats.notes.push_back("processed at " + std::to_string(prepared.width) + "x" +
                            std::to_string(prepared.height) + " (this model needs sides in multiples of " +
                            std::to_string(token_pixels) + " pixels), result resized back");
  }
  prepared.image = image_to_tensor(processed);
  prepared.latent_height = prepared.height / vae_scale_factor();
  prepared.latent_width = prepared.width / vae_scale_factor();
  rules::check_mask_reach(request.mask_grow_pixels, request.mask_feather_pixels, request.token_dilation, width,
                          height, static_cast<int>(prepared.width / token_pixels),
                          static_cast<int>(prepared.height / token_pixels));
  prepared.mask = prepare_mask(std::move(original_mask), processed_mask, vae_scale_factor(), token_pixels,
                               request.token_dilation);

  const bool encodes_text = components_.text.present() && !components_.unconditional;
  if (!encodes_text && (!request.prompt.empty() || !request.negative_prompt.empty()))
    stats.notes.push_back(components_.unconditional
                              ? "this model is unconditional: the text prompt is not used"
                              : "this model has no text encoder: the text prompt is not used (pass prompt "
                                "embeddings, or use a folder with text_encoder and text_encoder_2)");
  if (encodes_text && !request.negative_prompt.empty())
    stats.notes.push_back("Flux models take no negative prompt: it is not used");
  const bool use_request_prompt = request.conditioning.defined() && !components_.unconditional;
  if (request.conditioning.defined() && components_.unconditional)
    stats.notes.push_back("this model is unconditional: the prompt embeddings (" + request.conditioning.source +
                          ") are ignored");
  // Given embeddings win over the text; a folder with encoders encodes the prompt (even an empty
  // one, as FluxPipeline does), reusing the store's copy of a prompt encoded before.
  Conditioning encoded_prompt;
  if (encodes_text && use_request_prompt && !request.prompt.empty())
    stats.notes.push_back("prompt embeddings were given: the text prompt is not used");
  if (encodes_text && !use_request_prompt) {
    const auto encode_start = std::chrono::steady_clock::now();
    FluxPromptEncoding encoding =
        flux_prompt_conditioning(capture_store(), components_.text, request.prompt, request.max_sequence_length);
    stats.prompt_cache_hit = encoding.cache_hit;
    char encoded_note[96];
    std::snprintf(encoded_note, sizeof encoded_note, "prompt embeddings: encoded in %.2f s%s",
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - encode_start).count(),
                  encoding.store_error.empty() ? " and kept for later edits" : "");
    stats.notes.push_back(encoding.cache_hit ? "prompt embeddings: reused from the store (no text encoder ran)"
                                             : encoded_note);
    if (encoding.truncated)
      stats.notes.push_back("the prompt is longer than the text encoders take (77 CLIP tokens, " +
                            std::to_string(encoding.conditioning.prompt_embeds.size(0)) +
                            " T5 tokens): the rest was cut off");
    if (!encoding.store_error.empty())
      stats.notes.push_back("prompt embeddings not kept: " + encoding.store_error);
    encoded_prompt = std::move(encoding.conditioning);
  }
  const Conditioning& conditioning = encoded_prompt.defined() ? encoded_prompt
                                     : use_request_prompt     ? request.conditioning
                                                              : components_.empty_prompt;
  if (!conditioning.defined())
    throw Error(components_.model_dir +
                ": the model has no text encoder and no stored empty-prompt embeddings; pass "
                "prompt embeddings (prompt_embeds / pooled_prompt_embeds safetensors)");
  const FluxConfig& config = components_.transformer->config();
  if (conditioning.prompt_embeds.dim() != 2 ||
      conditioning.prompt_embeds.size(1) != config.joint_attention_dim ||
      conditioning.pooled_prompt_embeds.dim() != 1 ||
      conditioning.pooled_prompt_embeds.size(0) != config.pooled_projection_dim)
    throw Error(conditioning.source + ": prompt embeddings must be [T, " +
                std::to_string(config.joint_attention_dim) + "] and [" +
                std::to_string(config.pooled_projection_dim) + "] for this model");
  prepared.prompt_embeds = conditioning.prompt_embeds;
  prepared.pooled_prompt_embeds = conditioning.pooled_prompt_embeds;

  ContentHasher hasher;
  hasher.update(std::to_string(processed.width) + "x" + std::to_string(processed.height));
  hasher.update(processed.pixels.data(), processed.pixels.size());
  prepared.template_hash = hasher.hex();

  stats.width = prepared.width;
  stats.height = prepared.height;
  stats.mask_ratio = prepared.mask.ratio();
  return prepared;
}

engine::CaptureId FluxInpaintPipeline::capture_id(const Prepared& prepared,
                                                  const EditRequest& request) const {
  std::ostringstream config;
  config << prepared.width << "x" << prepared.height << " steps=" << request.steps
         << " strength=" << request.strength
         << " guidance=" << request.guidance_scale.value_or(components_.default_guidance)
         << " dtype=" << c10::toString(components_.transformer->dtype());
  return {prepared.template_hash, components_.fingerprint, config.str()};
}

}  // namespace flashps
