// A folder tree of photos for training and held-out evaluation. Photos are decoded once and kept
// downscaled (short side at most `max_short_side`) as 8-bit tensors; crops are drawn at random
// positions and scales, resized with antialiasing, and flipped at random.
#pragma once
#include <ATen/Tensor.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/diagnostics/progress.h"

namespace flashps::training {

enum class PhotoSplit { train, holdout, all };

struct PhotoSetOptions {
  int64_t max_short_side = 512;
  int64_t min_short_side = 256;  // smaller photos are skipped
  // Every photo whose path hash falls in 1/holdout_every of the hash space is held out.
  int holdout_every = 8;
};

class PhotoSet {
 public:
  // Finds .jpg/.jpeg/.png files under each folder (recursively, sorted for reproducibility) and
  // keeps those of `split`. Unreadable files are skipped and listed in skipped().
  static PhotoSet load(const std::vector<std::string>& folders, PhotoSplit split, const PhotoSetOptions& options,
                       const ProgressCallback& progress = {});

  size_t size() const { return photos_.size(); }
  const std::vector<std::string>& paths() const { return paths_; }
  const std::vector<std::string>& skipped() const { return skipped_; }

  // A random square crop [3, size, size] in [-1, 1] float32.
  at::Tensor random_crop(int64_t size, std::mt19937_64& rng) const;
  // Photo `index` whole (downscaled), [3, H, W] in [-1, 1].
  at::Tensor photo(size_t index) const;

 private:
  std::vector<at::Tensor> photos_;  // uint8 [3, H, W]
  std::vector<std::string> paths_, skipped_;
};

// Resize [C, H, W] float to [C, height, width] with antialiasing when shrinking.
at::Tensor resize_image_tensor(const at::Tensor& image, int64_t height, int64_t width);

}  // namespace flashps::training
