#include "models/common/packed_batch.h"

#include <ATen/ATen.h>

#include "core/kernels/attention.h"

namespace flashps {

PackedBatch PackedBatch::from_counts(
    const std::vector<std::pair<int64_t, int64_t>>& text_and_image, const at::Device& device) {
  PackedBatch batch;
  std::vector<int64_t> text_request, image_request;
  for (size_t r = 0; r < text_and_image.size(); ++r) {
    RequestSlice slice;
    slice.text_begin = batch.text_rows;
    slice.text_count = text_and_image[r].first;
    slice.image_begin = batch.image_rows;
    slice.image_count = text_and_image[r].second;
    batch.text_rows += slice.text_count;
    batch.image_rows += slice.image_count;
    text_request.insert(text_request.end(), slice.text_count, int64_t(r));
    image_request.insert(image_request.end(), slice.image_count, int64_t(r));
    batch.requests.push_back(slice);
  }
  auto options = at::TensorOptions().dtype(at::kLong);
  batch.text_row_request = at::tensor(text_request, options).to(device);
  batch.image_row_request = at::tensor(image_request, options).to(device);
  return batch;
}

at::Tensor PackedBatch::rows_of(const at::Tensor& per_request, const at::Tensor& row_request) const {
  if (requests.size() == 1) return per_request;  // [1, D] broadcasts over rows
  return per_request.index_select(0, row_request);
}

at::Tensor PackedBatch::text_rows_of(const at::Tensor& per_request) const {
  return rows_of(per_request, text_row_request);
}

at::Tensor PackedBatch::image_rows_of(const at::Tensor& per_request) const {
  return rows_of(per_request, image_row_request);
}

BlockQueryPlan plan_block_queries(const PackedBatch& batch,
                                  const std::vector<engine::BlockTokens>& tokens) {
  BlockQueryPlan plan;
  for (const auto& request_tokens : tokens)
    if (request_tokens.query_rows.defined()) plan.all_rows = false;
  int64_t begin = 0;
  std::vector<at::Tensor> rows, owners;
  for (size_t r = 0; r < batch.requests.size(); ++r) {
    const RequestSlice& slice = batch.requests[r];
    const at::Tensor& local = r < tokens.size() ? tokens[r].query_rows : at::Tensor();
    int64_t count = local.defined() ? local.numel() : slice.image_count;
    plan.query_begin.push_back(begin);
    plan.query_count.push_back(count);
    begin += count;
    if (!plan.all_rows) {
      auto options = batch.image_row_request.options();
      rows.push_back(local.defined() ? local.to(options) + slice.image_begin
                                     : at::arange(slice.image_begin,
                                                  slice.image_begin + slice.image_count, options));
      owners.push_back(at::full({count}, int64_t(r), options));
    }
  }
  if (!plan.all_rows) {
    plan.image_query_rows = at::cat(rows);
    plan.image_query_request = at::cat(owners);
  }
  return plan;
}

std::pair<at::Tensor, at::Tensor> packed_joint_attention(
    const PackedBatch& batch, const BlockQueryPlan& plan,
    const std::vector<engine::BlockTokens>& tokens, const at::Tensor& q_text,
    const at::Tensor& k_text, const at::Tensor& v_text, const at::Tensor& q_image,
    const at::Tensor& k_image, const at::Tensor& v_image, int64_t heads, bool bf16_products) {
  const int64_t width = q_image.size(1);
  at::Tensor text_out = at::empty({batch.text_rows, width}, q_image.options());
  at::Tensor image_out = at::empty({q_image.size(0), width}, q_image.options());
  for (size_t r = 0; r < batch.requests.size(); ++r) {
    const RequestSlice& slice = batch.requests[r];
    const int64_t queries = plan.query_count[r];
    std::vector<at::Tensor> q_parts, k_parts, v_parts, skipped;
    if (slice.text_count) {
      q_parts.push_back(q_text.narrow(0, slice.text_begin, slice.text_count));
      k_parts.push_back(k_text.narrow(0, slice.text_begin, slice.text_count));
      v_parts.push_back(v_text.narrow(0, slice.text_begin, slice.text_count));
    }
    if (queries) q_parts.push_back(q_image.narrow(0, plan.query_begin[r], queries));
    if (slice.image_count) {
      k_parts.push_back(k_image.narrow(0, slice.image_begin, slice.image_count));
      v_parts.push_back(v_image.narrow(0, slice.image_begin, slice.image_count));
    }
    if (r < tokens.size() && tokens[r].extra_keys.defined() && tokens[r].extra_keys.size(0)) {
      // Cached rows as they are: attention converts them to its product dtype (none for bf16).
      k_parts.push_back(tokens[r].extra_keys);
      v_parts.push_back(tokens[r].extra_values);
      if (tokens[r].extra_skipped_rows.defined()) {
        skipped.resize(k_parts.size());
        skipped.back() = tokens[r].extra_skipped_rows;
      }
    }
    if (q_parts.empty()) continue;
    at::Tensor joined_queries = q_parts.size() == 1 ? q_parts[0] : at::cat(q_parts, 0);
    at::Tensor out = token_major_attention(joined_queries, k_parts, v_parts, heads, skipped, bf16_products);
    if (slice.text_count)
      text_out.narrow(0, slice.text_begin, slice.text_count).copy_(out.narrow(0, 0, slice.text_count));
    if (queries)
      image_out.narrow(0, plan.query_begin[r], queries).copy_(out.narrow(0, slice.text_count, queries));
  }
  return {text_out, image_out};
}

void apply_replaced_rows(const PackedBatch& batch, const std::vector<engine::BlockTokens>& tokens,
                         at::Tensor& image_stream) {
  for (size_t r = 0; r < tokens.size() && r < batch.requests.size(); ++r) {
    const auto& request_tokens = tokens[r];
    if (!request_tokens.replaced_rows.defined() || request_tokens.replaced_rows.numel() == 0)
      continue;
    at::Tensor rows = request_tokens.replaced_rows.to(at::kLong) + batch.requests[r].image_begin;
    image_stream.index_copy_(0, rows, request_tokens.replaced_values.to(image_stream.scalar_type()));
  }
}

void record_image_keys_values(const PackedBatch& batch, const std::vector<engine::TokenRouter*>& routers,
                              int block, const at::Tensor& keys, const at::Tensor& values,
                              int64_t image_offset) {
  for (size_t r = 0; r < routers.size(); ++r) {
    if (!routers[r] || !routers[r]->wants_keys_values(block)) continue;
    const RequestSlice& slice = batch.requests[r];
    routers[r]->record_keys_values(block, keys.narrow(0, image_offset + slice.image_begin, slice.image_count),
                                   values.narrow(0, image_offset + slice.image_begin, slice.image_count));
  }
}

void finish_block_image_rows(const PackedBatch& batch, const std::vector<engine::BlockTokens>& tokens,
                             const std::vector<engine::TokenRouter*>& routers, int block,
                             at::Tensor& image_stream) {
  apply_replaced_rows(batch, tokens, image_stream);
  for (size_t r = 0; r < routers.size(); ++r) {
    if (!routers[r] || !routers[r]->wants_block_output(block)) continue;
    const RequestSlice& slice = batch.requests[r];
    routers[r]->record_block_output(block, image_stream.narrow(0, slice.image_begin, slice.image_count));
  }
}

}  // namespace flashps
