// Every rule an edit's settings obey, written once: the bounds of steps, strength, guidance,
// grow/feather, token dilation, context size and max_sequence_length, one message per problem.
// The C API checks flashps_edit_params with it (api/edit_request.cpp; the CLI, HTTP, plugins and
// the app reach it there, and through the public bounds in flashps/editor.h, which
// api/edit_request.cpp holds equal to these), batch manifests check their lines with it
// (serve_tools/batch_manifest.cpp), and the pipelines assert it (steps once resolved, the
// image-dependent reach). Names of cache modes, batching and balance policies have one parser
// each (engine/cache_mode.h, serve/batching.h, serve/load_balancer.h) behind the C API's
// name<->enum functions. No LibTorch: the batch-manifest fuzz target links it.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "core/image/image.h"

namespace flashps::rules {

constexpr int kMaxSteps = 1000;
constexpr double kMaxGuidanceScale = 100;
// Grow and feather reach at most across the image, and no image is wider than kMaxImageSide;
// token dilation likewise across the token grid (16 pixels a token at most).
constexpr int kMaxMaskPixels = kMaxImageSide;
constexpr int kMaxTokenDilation = kMaxImageSide / 16;
constexpr int kMaxContextSize = kMaxImageSide;
constexpr int64_t kMaxSequenceLength = 512;  // FluxPipeline's T5 limit

// An edit's settings with flashps_edit_params' meanings (a front end converts its own fields).
struct EditSettings {
  int steps = 0;               // 0: the model's recommendation
  double strength = 1;         // (0, 1]
  double guidance_scale = -1;  // < 0: the model's default
  int mask_grow_pixels = 0, mask_feather_pixels = 0, token_dilation = 0;
  int context_size = 0;        // 0: the model's native size; < 0: the whole image
  int64_t max_sequence_length = 0;  // 0: the model's default
  int texture_transfer = -1;   // -1: the model's choice, 0 off, 1 on
};

// How a front end names a field: "steps" -> "flashps_edit_params.steps" (C API), or
// "batch.jsonl:3: \"steps\"" (manifests).
using FieldName = std::function<std::string(const std::string& field)>;

// Throws InvalidArgumentError "<name(field)> is <value>; it must be <allowed>" for the first
// setting out of its range, e.g. "flashps_edit_params.steps is 1001; it must be 0 (the model's
// recommendation) to 1000".
void check_edit_settings(const EditSettings& settings, const FieldName& name);

// The pipelines' assertion once the model's recommendation is applied: steps 1..kMaxSteps and
// strength in (0, 1] (InvalidArgumentError naming the field as above, without a prefix).
void check_resolved_steps(int steps, double strength);

// The image-dependent reach, once the image is known: grow and feather at most the image's longer
// side, token dilation at most the token grid's (beyond that they only cost time, or a feather
// wider than the image fades the whole paste-back mask and returns the input unchanged). Throws
// InvalidArgumentError "mask_feather_pixels is 5000; for this 256x256 image it must be 0 to 256".
void check_mask_reach(int mask_grow_pixels, int mask_feather_pixels, int token_dilation, int width, int height,
                      int grid_width, int grid_height);

}  // namespace flashps::rules
