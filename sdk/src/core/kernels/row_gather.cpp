#include "core/kernels/row_gather.h"

#include <ATen/ATen.h>

#include <cstring>

#include "core/diagnostics/error.h"

namespace flashps {

at::Tensor gather_rows_single_thread(const at::Tensor& source, const at::Tensor& rows) {
  if (source.dim() != 2 || !source.device().is_cpu() || source.stride(1) != 1)
    return source.index_select(0, rows);
  at::Tensor indices = rows.to(at::kCPU, at::kLong).contiguous();
  const int64_t count = indices.numel(), height = source.size(0);
  const size_t row_bytes = static_cast<size_t>(source.size(1)) * source.element_size();
  const size_t stride_bytes = static_cast<size_t>(source.stride(0)) * source.element_size();
  at::Tensor result = at::empty({count, source.size(1)}, source.options());
  const auto* from = static_cast<const uint8_t*>(source.data_ptr());
  auto* to = static_cast<uint8_t*>(result.data_ptr());
  const int64_t* index = indices.data_ptr<int64_t>();
  for (int64_t i = 0; i < count; ++i) {
    if (index[i] < 0 || index[i] >= height) throw Error("row index out of range in capture read");
    std::memcpy(to + i * row_bytes, from + index[i] * stride_bytes, row_bytes);
  }
  return result;
}

}  // namespace flashps
