// The one narrow interface between the mask-aware engine and a model's transformer blocks.
//
// A model runs a batch of requests as a packed stream of token rows. For every request and
// block it asks the request's TokenRouter which image rows to compute and what cached data to
// use; it never knows whether the cache is in memory, on disk, or how it was planned. A request
// without a router is a plain full computation.
//
// Rows are local to the request's *carried* image rows, in the order the model was given them
// (RequestTokens::image_positions). Blocks are numbered in execution order across the model.
#pragma once
#include <ATen/Tensor.h>

namespace flashps::engine {

struct BlockTokens {
  // Carried image rows whose queries, attention output and MLP are computed (sorted, int64).
  // Undefined: all carried rows.
  at::Tensor query_rows;
  // Keys and values of image tokens the request does not carry ([n, heads*head_dim], RoPE
  // already applied): appended to the request's keys and values in attention (`kv` replay).
  at::Tensor extra_keys, extra_values;
  // Rows of extra_keys/extra_values the request carries and computes afresh, so attention must
  // skip them (int64, sorted); undefined: attend to every extra row. Set when the cache hands
  // over a whole resident entry in place of a gathered copy of the rows not carried.
  at::Tensor extra_skipped_rows;
  // Carried rows whose block output is replaced by cached values after the block (`hidden`
  // replay): row indices [n] and values [n, dim].
  at::Tensor replaced_rows, replaced_values;
};

class TokenRouter {
 public:
  virtual ~TokenRouter() = default;

  // Called before every block; may wait for the block's cached data to finish loading.
  virtual BlockTokens before_block(int block) = 0;

  // Capture hooks, asked after a block has computed all carried rows of the request.
  virtual bool wants_keys_values(int block) const = 0;
  virtual void record_keys_values(int block, const at::Tensor& keys, const at::Tensor& values) = 0;
  virtual bool wants_block_output(int block) const = 0;
  virtual void record_block_output(int block, const at::Tensor& image_rows) = 0;

  // The model output of the carried rows [carried, channels] -> every image token's output
  // [tokens, channels] (replay fills the rows it did not compute; capture records them).
  virtual at::Tensor finish_output(const at::Tensor& carried_output) = 0;
};

}  // namespace flashps::engine
