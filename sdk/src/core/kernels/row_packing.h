// Packs several requests' row tables (token inputs, RoPE tables) into one batch tensor in a
// single pass of row copies. Doing it with ATen takes an index_select and a cat or copy per
// request and table: each a full extra pass over the data and a few microseconds of dispatch,
// which made up most of a serving step's batch assembly.
#pragma once
#include <ATen/Tensor.h>

#include <vector>

namespace flashps {

struct RowBlock {
  at::Tensor source;            // [n, width]: one request's rows
  at::Tensor rows;              // optional int64 indices into source; undefined = all n rows
  int64_t destination_row = 0;  // where the block's first row goes
};

// Copies every block's rows into destination [R, C] at rows destination_row.. and columns
// first_column..first_column + width. Same dtype and device throughout; rows are bounds-checked.
// CPU tensors: plain row copies on the intra-op threads; other devices: ATen copies.
void pack_rows(at::Tensor& destination, int64_t first_column, const std::vector<RowBlock>& blocks);

}  // namespace flashps
