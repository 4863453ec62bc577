// A batch of requests packed as rows: every request contributes its text rows to one text
// stream and its carried image rows to one image stream, so requests with different token
// counts (different sizes, different masks) run together without padding. Per-token layers run
// on the packed streams; attention runs per request.
#pragma once
#include <ATen/Tensor.h>

#include <utility>
#include <vector>

#include "engine/token_router.h"

namespace flashps {

struct RequestSlice {
  int64_t text_begin = 0, text_count = 0;    // rows in the text stream
  int64_t image_begin = 0, image_count = 0;  // rows in the image stream
};

struct PackedBatch {
  std::vector<RequestSlice> requests;
  int64_t text_rows = 0, image_rows = 0;
  at::Tensor text_row_request, image_row_request;  // request index per row (int64)

  static PackedBatch from_counts(const std::vector<std::pair<int64_t, int64_t>>& text_and_image,
                                 const at::Device& device);
  // Per-request values [B, D] spread to rows [N, D] (or [1, D], broadcasting, for one request).
  at::Tensor text_rows_of(const at::Tensor& per_request) const;
  at::Tensor image_rows_of(const at::Tensor& per_request) const;
  at::Tensor rows_of(const at::Tensor& per_request, const at::Tensor& row_request) const;
};

// Which image rows a block computes, merged over the batch's requests.
struct BlockQueryPlan {
  bool all_rows = true;
  at::Tensor image_query_rows;       // global image-stream rows [Nq] (when !all_rows)
  at::Tensor image_query_request;    // request index per query row
  std::vector<int64_t> query_begin;  // per request: first row in the query tensor
  std::vector<int64_t> query_count;
};

BlockQueryPlan plan_block_queries(const PackedBatch& batch,
                                  const std::vector<engine::BlockTokens>& tokens);

// Joint text+image attention, per request: queries are the request's text rows and its query
// image rows; keys/values its text rows, all its carried image rows and any extra cached rows.
// Returns {text output [Nt, width], image output [Nq, width]}. bf16_products: the model's
// weights are bf16, and attention's products run in bf16 too (core/kernels/attention.h).
std::pair<at::Tensor, at::Tensor> packed_joint_attention(
    const PackedBatch& batch, const BlockQueryPlan& plan,
    const std::vector<engine::BlockTokens>& tokens, const at::Tensor& q_text,
    const at::Tensor& k_text, const at::Tensor& v_text, const at::Tensor& q_image,
    const at::Tensor& k_image, const at::Tensor& v_image, int64_t heads, bool bf16_products = false);

// Writes `replaced_values` of each request into its rows of the image stream (hidden replay).
void apply_replaced_rows(const PackedBatch& batch, const std::vector<engine::BlockTokens>& tokens,
                         at::Tensor& image_stream);

// Capture hooks shared by every block type. keys/values hold the image rows starting at row
// `image_offset`; each request's rows go to its router if it asks for them.
void record_image_keys_values(const PackedBatch& batch, const std::vector<engine::TokenRouter*>& routers,
                              int block, const at::Tensor& keys, const at::Tensor& values,
                              int64_t image_offset);
// End of a block: hidden-replay rows are written back, then block outputs are captured.
void finish_block_image_rows(const PackedBatch& batch, const std::vector<engine::BlockTokens>& tokens,
                             const std::vector<engine::TokenRouter*>& routers, int block,
                             at::Tensor& image_stream);

}  // namespace flashps
