#include "core/kernels/row_packing.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "core/diagnostics/error.h"

namespace flashps {
namespace {

int64_t block_row_count(const RowBlock& block) {
  return block.rows.defined() ? block.rows.numel() : block.source.size(0);
}

void check_block(const at::Tensor& destination, int64_t first_column, const RowBlock& block) {
  const at::Tensor& source = block.source;
  if (source.dim() != 2) throw Error("row packing: a source is not a matrix");
  if (source.scalar_type() != destination.scalar_type() || source.device() != destination.device())
    throw Error("row packing: a source's dtype or device differs from the packed tensor's");
  if (first_column < 0 || first_column + source.size(1) > destination.size(1))
    throw Error("row packing: a source's " + std::to_string(source.size(1)) + " columns do not fit at column " +
                std::to_string(first_column) + " of " + std::to_string(destination.size(1)));
  const int64_t count = block_row_count(block);
  if (block.destination_row < 0 || block.destination_row + count > destination.size(0))
    throw Error("row packing: " + std::to_string(count) + " rows do not fit at row " +
                std::to_string(block.destination_row) + " of " + std::to_string(destination.size(0)));
}

}  // namespace

void pack_rows(at::Tensor& destination, int64_t first_column, const std::vector<RowBlock>& blocks) {
  if (destination.dim() != 2) throw Error("row packing: the packed tensor is not a matrix");
  for (const RowBlock& block : blocks) check_block(destination, first_column, block);
  const bool plain_copies = destination.device().is_cpu() && destination.stride(1) == 1;
  if (!plain_copies) {
    for (const RowBlock& block : blocks) {
      at::Tensor part = block.rows.defined() ? block.source.index_select(0, block.rows.to(at::kLong)) : block.source;
      destination.narrow(0, block.destination_row, part.size(0)).narrow(1, first_column, part.size(1)).copy_(part);
    }
    return;
  }

  // One flat list of (destination row, source row) pairs per block, so the copies split evenly
  // over threads however unequal the requests are.
  std::vector<at::Tensor> sources, indices;
  std::vector<int64_t> block_start{0};
  for (const RowBlock& block : blocks) {
    sources.push_back(block.source.stride(1) == 1 ? block.source : block.source.contiguous());
    at::Tensor rows;
    if (block.rows.defined()) {
      rows = block.rows.to(at::kCPU, at::kLong).contiguous();
      const int64_t height = block.source.size(0);
      const int64_t* index = rows.data_ptr<int64_t>();
      for (int64_t i = 0; i < rows.numel(); ++i)
        if (index[i] < 0 || index[i] >= height)
          throw Error("row packing: row index " + std::to_string(index[i]) + " is outside a source of " +
                      std::to_string(height) + " rows");
    }
    indices.push_back(rows);
    block_start.push_back(block_start.back() + block_row_count(block));
  }
  const int64_t total = block_start.back();
  const size_t element = destination.element_size();
  struct Plain {
    const uint8_t* source;
    size_t source_stride, row_bytes;
    const int64_t* rows;  // null: every row in order
    uint8_t* destination;  // the block's first row, at first_column
  };
  auto* to = static_cast<uint8_t*>(destination.data_ptr());
  const size_t destination_stride = static_cast<size_t>(destination.stride(0)) * element;
  std::vector<Plain> plain;
  for (size_t b = 0; b < blocks.size(); ++b)
    plain.push_back({static_cast<const uint8_t*>(sources[b].data_ptr()),
                     static_cast<size_t>(sources[b].stride(0)) * element,
                     static_cast<size_t>(sources[b].size(1)) * element,
                     indices[b].defined() ? indices[b].data_ptr<int64_t>() : nullptr,
                     to + blocks[b].destination_row * destination_stride + first_column * element});
  // ~64 rows of a few hundred bytes per task: small batches stay on one thread.
  at::parallel_for(0, total, 64, [&](int64_t begin, int64_t end) {
    size_t b = std::upper_bound(block_start.begin(), block_start.end(), begin) - block_start.begin() - 1;
    for (int64_t i = begin; i < end; ++i) {
      while (i >= block_start[b + 1]) ++b;
      const Plain& block = plain[b];
      const int64_t local = i - block_start[b];
      const int64_t source_row = block.rows ? block.rows[local] : local;
      std::memcpy(block.destination + local * destination_stride, block.source + source_row * block.source_stride,
                  block.row_bytes);
    }
  });
}

}  // namespace flashps
