// Texture for the fills of small models: the masked region keeps the model's colours and shapes
// (its low frequencies) and takes its fine detail from the surroundings, as Photoshop's
// content-aware fill takes patches from the rest of the image.
//
// A small model trained with per-pixel losses fills a hole with the average of everything that
// could be there, which is smooth; a detail loss taught it a tile mosaic instead of texture
// (samples/models/flashps-fill-small/MODEL_CARD.md). So the fine detail is copied: the masked
// region is covered by overlapping tiles, and each takes the high-pass of the kept tile whose
// smoothed colours best match the model's fill there (near ones preferred, with a little fixed randomness for variety),
// blended with windows that keep the detail's strength across overlaps. Only the mask's bounding
// box and a margin as large are read, and the blurs run at reduced resolution
// (classical/smooth_field.h), so a 12-megapixel photo takes seconds, not minutes.
//
// Models opt in with "_flashps_texture_transfer": true in model_index.json; requests can override.
#pragma once
#include <ATen/Tensor.h>

#include "core/image/image.h"

namespace flashps {

struct TextureTransferOptions {
  double detail_sigma = 2.0;       // Gaussian sigma (pixels) splitting shape from detail
  int64_t tile = 16;               // tile side (pixels, even); tiles overlap by half
  double distance_weight = 4e-5;   // cost per (tile sides of distance)^2, against squared colour error
  double variety = 2e-3;           // scale of a fixed pseudo-random cost per (target, source) pair
  int64_t blend = 4;               // sources blended per tile (continuity; see texture_transfer.cpp)
  double blend_temperature = 3e-3; // cost difference over which a source's blend weight falls by e
  int64_t max_candidates = 4096;   // source tiles considered (sampled more sparsely beyond)
  double detail_strength = 1.0;    // scale of the copied detail (1: as strong as in the photo)
};

// Options for a model whose tokens cover `token_pixels` pixels, its output scaled by `scale`.
TextureTransferOptions texture_transfer_options(int64_t token_pixels, double scale);

// fill, original [3, H, W] in [-1, 1]; pixel_mask [H, W] (> 0.5 = filled). Returns `fill` with
// the masked pixels' detail replaced as described above; kept pixels unchanged. Deterministic.
// Returns `fill` unchanged when nothing is masked or no tile of the surroundings is fully kept.
at::Tensor transfer_texture(const at::Tensor& fill, const at::Tensor& original, const at::Tensor& pixel_mask,
                            const TextureTransferOptions& options = {});

// The same on 8-bit RGB images with a mask (>= 128 = filled), as the pipeline holds them: only
// the mask's bounding box and the margin searched for sources are converted and read, so a small
// mask in a large photo costs little. Equals the tensor version on the converted images.
Image transfer_texture(const Image& fill, const Image& original, const Image& mask,
                       const TextureTransferOptions& options = {});

}  // namespace flashps
