// Several Linear layers applied to the same input, run as one wider matrix product: for the
// few hundred rows of a masked edit one wide GEMM is markedly more efficient than several narrow
// ones. The concatenated weight is built on first use and rebuilt if the layers' weights change
// (loading, dtype conversion); the layers keep their own checkpoint names.
// Quantized parts (layers.h) of one encoding and width fuse by concatenating their stored row
// segments (no decoded copy); parts that are quantized differently, or mixed with dense ones,
// run one product each rather than holding a dense concatenation.
#pragma once
#include <ATen/Tensor.h>

#include <memory>
#include <mutex>
#include <vector>

#include "models/common/layers.h"

namespace flashps {

class FusedLinear {
 public:
  FusedLinear() = default;
  explicit FusedLinear(std::vector<Linear> parts) : parts_(std::move(parts)) {}
  FusedLinear(const FusedLinear& other) : parts_(other.parts_) {}
  FusedLinear& operator=(const FusedLinear& other) {
    std::lock_guard<std::mutex> lock(mutex_);
    parts_ = other.parts_;
    weight_ = at::Tensor();  // rebuilt from the new parts on first use
    bias_ = at::Tensor();
    quantized_.reset();
    source_pointers_.clear();
    return *this;
  }

  // Outputs of each part for input x [rows, in]: views into one [rows, sum(out)] result.
  std::vector<at::Tensor> forward(const at::Tensor& x) const;

 private:
  std::vector<at::Tensor> forward_quantized(const at::Tensor& x) const;
  std::vector<at::Tensor> split_outputs(const at::Tensor& out) const;

  std::vector<Linear> parts_;
  mutable std::mutex mutex_;
  mutable at::Tensor weight_, bias_;
  mutable std::shared_ptr<const QuantizedMatrix> quantized_;  // the parts' segments, when they fuse
  mutable std::vector<int64_t> source_pointers_;
};

}  // namespace flashps
