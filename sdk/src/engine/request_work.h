// What a request costs a device per denoising step, known before it runs (estimated from the
// image and mask at submission, exact once pre-processing has prepared it).
#pragma once
#include <cstdint>

namespace flashps::engine {

struct RequestWork {
  int steps = 28;              // denoising steps the request runs
  int64_t image_tokens = 0;    // tokens of the processed image
  int64_t masked_tokens = 0;   // tokens the mask-aware engine computes
  int64_t text_tokens = 0;
  bool cached = false;         // a template capture is replayed (else every token is computed)
  // Share of the steps considered that this request is present for (cost estimates over a
  // span of steps; 1 for a single step).
  double weight = 1.0;

  double mask_ratio() const { return image_tokens ? double(masked_tokens) / double(image_tokens) : 0.0; }
  // Tokens computed per step: the masked ones when replaying, all otherwise.
  int64_t computed_tokens() const { return cached ? masked_tokens : image_tokens; }
};

}  // namespace flashps::engine
