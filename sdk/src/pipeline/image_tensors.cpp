#include "pipeline/image_tensors.h"

#include <ATen/ATen.h>

#include <cstring>

#include "core/diagnostics/error.h"
#include "core/mask/mask_ops.h"

namespace flashps {

at::Tensor image_to_tensor(const Image& image) {
  Image rgb = to_rgb(image);
  at::Tensor bytes = at::from_blob(rgb.pixels.data(), {rgb.height, rgb.width, 3}, at::kByte);
  return bytes.permute({2, 0, 1}).to(at::kFloat).div(127.5).sub(1.0).contiguous();
}

Image tensor_to_image(const at::Tensor& tensor) {
  at::Tensor pixels = ((tensor.detach().to(at::kCPU, at::kFloat) + 1.0) * 127.5)
                          .clamp(0, 255)
                          .round()
                          .to(at::kByte)
                          .permute({1, 2, 0})
                          .contiguous();
  Image image(static_cast<int>(pixels.size(1)), static_cast<int>(pixels.size(0)), 3);
  std::memcpy(image.pixels.data(), pixels.data_ptr<uint8_t>(), image.pixels.size());
  return image;
}

at::Tensor mask_to_tensor(const Image& mask) {
  Image binary = binarize_mask(mask);
  at::Tensor bytes = at::from_blob(binary.pixels.data(), {binary.height, binary.width}, at::kByte);
  return (bytes.to(at::kFloat) / 255.0).round();
}

}  // namespace flashps
