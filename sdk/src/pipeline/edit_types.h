// What an edit takes and returns. Shared by every model family's pipeline and the serving layer.
#pragma once
#include <ATen/Tensor.h>

#include <optional>
#include <string>
#include <vector>

#include "core/image/image.h"
#include "core/diagnostics/progress.h"
#include "engine/cache_mode.h"

namespace flashps {

using engine::CacheMode;  // engine/cache_mode.h: how an edit uses the template cache
using engine::cache_mode_from_name;
using engine::cache_mode_name;

struct Conditioning {
  at::Tensor prompt_embeds;         // [T, joint_attention_dim]
  at::Tensor pooled_prompt_embeds;  // [pooled_projection_dim]
  std::string source;               // where it came from, for messages
  bool defined() const { return prompt_embeds.defined(); }
};

// Reads a safetensors file with "prompt_embeds" ([T, D] or [1, T, D]) and
// "pooled_prompt_embeds" ([P] or [1, P]). Throws Error naming the file otherwise.
Conditioning load_conditioning(const std::string& path);

struct EditRequest {
  Image image;                // the template (RGB or RGBA; alpha ignored)
  Image mask;                 // white = regenerate; resized (nearest) if its size differs
  Conditioning conditioning;  // empty: the model's stored empty-prompt embeddings
  // Text prompts, for models with text encoders (Stable Diffusion folders); models without one
  // take `conditioning` and say that the text is not used.
  std::string prompt, negative_prompt;
  // Flux folders with text encoders: T5 tokens of the prompt (FluxPipeline's
  // max_sequence_length, 1..512); 0 = the model's default (512).
  int max_sequence_length = 0;
  uint64_t seed = 0;
  int steps = 0;  // 0: the model's recommended steps (StepwisePipeline::recommended_steps)
  double strength = 1.0;                 // 1: start from pure noise in the masked region
  std::optional<double> guidance_scale;  // guidance-distilled models; default from the model
  int mask_grow_pixels = 0;              // composite mask: grow, then feather (pixels)
  int mask_feather_pixels = 0;
  int token_dilation = 0;  // extra ring of recomputed tokens around the mask
  // Replace the fill's fine detail by detail copied from the surroundings
  // (classical/texture_transfer.h); unset: as the model's folder recommends.
  std::optional<bool> texture_transfer;
  // Images larger than this (pixels per side) are edited through a window around the mask,
  // downscaled to this size when the window is larger, then pasted back: small models only see
  // their training resolution. 0 = the model's native size (none for models without one);
  // negative = always process the whole image.
  int context_size = 0;
  CacheMode mode = CacheMode::automatic;
  bool use_planner = true;  // hidden replay: let the planner skip loads that do not pay
  ProgressCallback progress;
};

struct EditStats {
  double total_seconds = 0, encode_seconds = 0, denoise_seconds = 0, decode_seconds = 0;
  int width = 0, height = 0;  // processing size
  int steps_run = 0;
  double mask_ratio = 0;      // masked tokens / tokens
  CacheMode mode_used = CacheMode::full;
  bool cache_hit = false;
  bool prompt_cache_hit = false;  // the prompt's embeddings came from the store: no text encoder ran
  double compute_saving = 1.0;  // FLOPs of a full step / FLOPs of the step as run (cost model)
  int blocks_from_cache = 0, blocks_computed = 0, entries_failed = 0;
  int64_t cache_bytes_loaded = 0;
  double load_wait_seconds = 0;
  std::vector<std::string> notes;  // user-facing remarks (resized mask, fallbacks, ...)
  std::string template_hash;       // the capture registered or reused; empty when none
};

struct EditResult {
  Image image;
  EditStats stats;
};

struct TemplateInfo {
  std::string template_hash;
  std::string config;
  int64_t bytes = 0;
  double seconds = 0;
  EditStats stats;
};

// A registration that did not run because its store takes no captures (read-only): no hash,
// and a note saying why and how to fix it.
TemplateInfo skipped_registration(const std::string& why_unwritable);

}  // namespace flashps
