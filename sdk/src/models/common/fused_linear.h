// Several Linear layers applied to the same input, run as one wider matrix product: for the
// few hundred rows of a masked edit one wide GEMM is markedly more efficient than several narrow
// ones. The concatenated weight is built on first use and rebuilt if the layers' weights change
// (loading, dtype conversion); the layers keep their own checkpoint names.
#pragma once
#include <ATen/Tensor.h>

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
    source_pointers_.clear();
    return *this;
  }

  // Outputs of each part for input x [rows, in]: views into one [rows, sum(out)] result.
  std::vector<at::Tensor> forward(const at::Tensor& x) const;

 private:
  std::vector<Linear> parts_;
  mutable std::mutex mutex_;
  mutable at::Tensor weight_, bias_;
  mutable std::vector<int64_t> source_pointers_;
};

}  // namespace flashps
