// Random inpainting masks of a requested area: brush strokes, blobs and boxes, the shapes users
// paint in editors. Deterministic for a given generator state. Used by the trainer, the
// benchmarks and the serving profiler (a synthetic workload), so it ships in the library.
#pragma once
#include <ATen/Tensor.h>

#include <random>

namespace flashps::workload {

enum class MaskShape { brush, blob, box, any };

// [height, width] float32 in {0, 1} whose masked fraction is close to target_ratio (shapes are
// added until it is reached; the last one may overshoot by a few percent).
at::Tensor random_mask(int64_t height, int64_t width, double target_ratio, std::mt19937_64& rng,
                       MaskShape shape = MaskShape::any);

}  // namespace flashps::workload
