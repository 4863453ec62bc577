// Copies selected rows of a 2-D tensor with plain memcpy on the calling thread. The block
// loader runs beside the compute threads: an ATen index_select there would open a second
// OpenMP team and oversubscribe the cores the compute is using.
#pragma once
#include <ATen/Tensor.h>

namespace flashps {

// source [n, width] (any dtype, rows contiguous), rows: int64 indices -> [rows, width].
at::Tensor gather_rows_single_thread(const at::Tensor& source, const at::Tensor& rows);

}  // namespace flashps
