#include <ATen/ATen.h>

#include "core/kernels/linear.h"
#include "core/diagnostics/phase_profile.h"
#include "models/flux/flux_blocks.h"

namespace flashps {
namespace {

class AdaNormSingleImpl : public torch::nn::Module {
 public:
  explicit AdaNormSingleImpl(Linear linear) { register_module("linear", linear); }
};
TORCH_MODULE(AdaNormSingle);

}  // namespace

FluxSingleBlockImpl::FluxSingleBlockImpl(int64_t dim, int64_t heads, int64_t head_dim) {
  const int64_t mlp_dim = 4 * dim;
  norm_linear = Linear(dim, 3 * dim);
  register_module("norm", AdaNormSingle(norm_linear));
  proj_mlp = register_module("proj_mlp", Linear(dim, mlp_dim));
  proj_out = register_module("proj_out", Linear(dim + mlp_dim, dim));
  attn = register_module("attn", FluxAttention(dim, heads, head_dim, /*joint=*/false, false));
  qkv_mlp = FusedLinear({attn->to_q, attn->to_k, attn->to_v, proj_mlp});
  kv = FusedLinear({attn->to_k, attn->to_v});
  q_mlp = FusedLinear({attn->to_q, proj_mlp});
}

void FluxSingleBlockImpl::forward(int block_index, const FluxBlockContext& context,
                                  at::Tensor& stream) const {
  const PackedBatch& batch = *context.batch;
  const int64_t heads = attn->heads;
  const int64_t text_rows = batch.text_rows;
  PhaseTimer phase(Phase::cache_wait);
  std::vector<engine::BlockTokens> tokens(batch.requests.size());
  for (size_t r = 0; r < tokens.size(); ++r)
    if (context.routers[r]) tokens[r] = context.routers[r]->before_block(block_index);
  phase.switch_to(Phase::row_plan);
  const BlockQueryPlan plan = plan_block_queries(batch, tokens);

  phase.switch_to(Phase::modulation);
  auto mod = norm_linear->forward(at::silu(context.temb)).chunk(3, 1);  // shift, scale, gate
  const at::Tensor& stream_request = context.stream_row_request;
  auto stream_rows_of = [&](const at::Tensor& per_request) {
    return batch.rows_of(per_request, stream_request);
  };
  at::Tensor normed =
      at::addcmul(stream_rows_of(mod[0]), layer_norm_no_affine(stream, 1e-6), stream_rows_of(mod[1]) + 1);

  const RotaryTables& rope = context.stream_rope;
  // Computed rows: every text row, then the image query rows (offset past the text rows).
  at::Tensor query_index, query_request;
  at::Tensor q_projected, k_projected, values, mlp_projected;
  phase.switch_to(Phase::projections);
  if (plan.all_rows) {
    auto projected = qkv_mlp.forward(normed);
    q_projected = projected[0], k_projected = projected[1], values = projected[2], mlp_projected = projected[3];
  } else {
    phase.switch_to(Phase::row_plan);
    query_index = at::cat({at::arange(text_rows, plan.image_query_rows.options()),
                           plan.image_query_rows + text_rows});
    query_request = at::cat({batch.text_row_request, plan.image_query_request});
    phase.switch_to(Phase::projections);
    auto key_value = kv.forward(normed);
    k_projected = key_value[0], values = key_value[1];
    auto query_mlp = q_mlp.forward(normed.index_select(0, query_index));
    q_projected = query_mlp[0], mlp_projected = query_mlp[1];
  }
  phase.switch_to(Phase::qk_norm_rope);
  at::Tensor keys = apply_rotary(per_head_rms_norm(attn->norm_k, k_projected, heads), rope, heads);
  RotaryTables query_rope = plan.all_rows ? rope
                                          : RotaryTables{rope.cos.index_select(0, query_index),
                                                         rope.sin.index_select(0, query_index)};
  at::Tensor queries = apply_rotary(per_head_rms_norm(attn->norm_q, q_projected, heads), query_rope, heads);
  phase.switch_to(Phase::output_mlp);
  at::Tensor mlp = gelu_tanh(mlp_projected);

  phase.switch_to(Phase::cache_io);
  record_image_keys_values(batch, context.routers, block_index, keys, values, text_rows);

  phase.switch_to(Phase::attention);

  const int64_t image_rows = batch.image_rows;
  const int64_t query_image_rows = queries.size(0) - text_rows;
  auto [text_attention, image_attention] = packed_joint_attention(
      batch, plan, tokens, queries.narrow(0, 0, text_rows), keys.narrow(0, 0, text_rows),
      values.narrow(0, 0, text_rows), queries.narrow(0, text_rows, query_image_rows),
      keys.narrow(0, text_rows, image_rows), values.narrow(0, text_rows, image_rows), heads,
      attn->to_q->weight_dtype() == at::kBFloat16);

  // proj_out over [attention, mlp]: two gemms on the weight's column halves, no concatenation.
  phase.switch_to(Phase::output_mlp);
  const int64_t dim = text_attention.size(1);
  at::Tensor attention = at::cat({text_attention, image_attention});
  at::Tensor block_out;
  // (A quantized weight multiplies whole rows: the concatenation below.)
  if (attention.scalar_type() == at::kFloat && !proj_out->quantized_weight()) {  // bf16 weights: mixed precision, see linear.h
    block_out = linear(attention, proj_out->weight.narrow(1, 0, dim), proj_out->bias);
    linear_accumulate(block_out, mlp, proj_out->weight.narrow(1, dim, proj_out->weight.size(1) - dim));
  } else {
    block_out = proj_out->forward(at::cat({attention, mlp}, 1));
  }
  at::Tensor gate = plan.all_rows ? stream_rows_of(mod[2]) : batch.rows_of(mod[2], query_request);
  if (plan.all_rows) {
    stream = stream + gate * block_out;
  } else {
    at::Tensor updated = stream.index_select(0, query_index) + gate * block_out;
    stream.index_copy_(0, query_index, updated);
  }

  phase.switch_to(Phase::cache_io);
  at::Tensor image = stream.narrow(0, text_rows, image_rows);
  finish_block_image_rows(batch, tokens, context.routers, block_index, image);
}

}  // namespace flashps
