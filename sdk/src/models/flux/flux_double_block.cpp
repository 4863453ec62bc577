#include <ATen/ATen.h>

#include "core/diagnostics/phase_profile.h"
#include "models/flux/flux_blocks.h"

namespace flashps {
namespace {

// Holds a submodule at "<name>.linear" (diffusers AdaLayerNormZero / Continuous).
class AdaNormImpl : public torch::nn::Module {
 public:
  explicit AdaNormImpl(Linear linear) { register_module("linear", linear); }
};
TORCH_MODULE(AdaNorm);

at::Tensor modulate(const at::Tensor& normalized, const at::Tensor& scale, const at::Tensor& shift) {
  return at::addcmul(shift, normalized, scale + 1);
}

RotaryTables select_rows(const RotaryTables& tables, const at::Tensor& rows) {
  return {tables.cos.index_select(0, rows), tables.sin.index_select(0, rows)};
}

}  // namespace

FluxDoubleBlockImpl::FluxDoubleBlockImpl(int64_t dim, int64_t heads, int64_t head_dim) {
  norm1_linear = Linear(dim, 6 * dim);
  norm1_context_linear = Linear(dim, 6 * dim);
  register_module("norm1", AdaNorm(norm1_linear));
  register_module("norm1_context", AdaNorm(norm1_context_linear));
  attn = register_module("attn", FluxAttention(dim, heads, head_dim, /*joint=*/true, true));
  ff = register_module("ff", FeedForward(dim, 4 * dim));
  ff_context = register_module("ff_context", FeedForward(dim, 4 * dim));
}

void FluxDoubleBlockImpl::forward(int block_index, const FluxBlockContext& context,
                                  at::Tensor& text, at::Tensor& image) const {
  const PackedBatch& batch = *context.batch;
  const int64_t heads = attn->heads;
  PhaseTimer phase(Phase::cache_wait);
  std::vector<engine::BlockTokens> tokens(batch.requests.size());
  for (size_t r = 0; r < tokens.size(); ++r)
    if (context.routers[r]) tokens[r] = context.routers[r]->before_block(block_index);
  phase.switch_to(Phase::row_plan);
  const BlockQueryPlan plan = plan_block_queries(batch, tokens);

  phase.switch_to(Phase::modulation);
  at::Tensor conditioning = at::silu(context.temb);
  auto image_mod = norm1_linear->forward(conditioning).chunk(6, 1);
  auto text_mod = norm1_context_linear->forward(conditioning).chunk(6, 1);
  // image_mod / text_mod: shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp.

  at::Tensor image_normed = modulate(layer_norm_no_affine(image, 1e-6),
                                     batch.image_rows_of(image_mod[1]),
                                     batch.image_rows_of(image_mod[0]));
  at::Tensor text_normed = modulate(layer_norm_no_affine(text, 1e-6),
                                    batch.text_rows_of(text_mod[1]), batch.text_rows_of(text_mod[0]));

  // Keys and values cover every carried row; queries only the rows this block computes.
  phase.switch_to(Phase::projections);
  at::Tensor q_projected, k_projected, v_image;
  if (plan.all_rows) {
    auto qkv = attn->image_qkv.forward(image_normed);
    q_projected = qkv[0], k_projected = qkv[1], v_image = qkv[2];
  } else {
    auto kv = attn->image_kv.forward(image_normed);
    k_projected = kv[0], v_image = kv[1];
    q_projected = attn->to_q->forward(image_normed.index_select(0, plan.image_query_rows));
  }
  auto text_qkv = attn->text_qkv.forward(text_normed);
  phase.switch_to(Phase::qk_norm_rope);
  at::Tensor k_image = apply_rotary(per_head_rms_norm(attn->norm_k, k_projected, heads), context.image_rope, heads);
  RotaryTables query_rope =
      plan.all_rows ? context.image_rope : select_rows(context.image_rope, plan.image_query_rows);
  at::Tensor q_image = apply_rotary(per_head_rms_norm(attn->norm_q, q_projected, heads), query_rope, heads);
  at::Tensor q_text = apply_rotary(per_head_rms_norm(attn->norm_added_q, text_qkv[0], heads), context.text_rope, heads);
  at::Tensor k_text = apply_rotary(per_head_rms_norm(attn->norm_added_k, text_qkv[1], heads), context.text_rope, heads);
  at::Tensor v_text = text_qkv[2];

  phase.switch_to(Phase::cache_io);
  record_image_keys_values(batch, context.routers, block_index, k_image, v_image, 0);

  phase.switch_to(Phase::attention);
  auto [text_attention, image_attention] = packed_joint_attention(
      batch, plan, tokens, q_text, k_text, v_text, q_image, k_image, v_image, heads,
      attn->to_q->weight_dtype() == at::kBFloat16);

  // Image stream: residual updates for the computed rows only.
  phase.switch_to(Phase::output_mlp);
  auto query_rows_of = [&](const at::Tensor& per_request) {
    return plan.all_rows ? batch.image_rows_of(per_request)
                         : batch.rows_of(per_request, plan.image_query_request);
  };
  at::Tensor image_rows = plan.all_rows ? image : image.index_select(0, plan.image_query_rows);
  image_rows = image_rows + query_rows_of(image_mod[2]) * attn->output_projection->forward(image_attention);
  at::Tensor mlp_input = modulate(layer_norm_no_affine(image_rows, 1e-6), query_rows_of(image_mod[4]),
                                  query_rows_of(image_mod[3]));
  image_rows = image_rows + query_rows_of(image_mod[5]) * ff->forward(mlp_input);
  if (plan.all_rows) {
    image = image_rows;
  } else {
    image.index_copy_(0, plan.image_query_rows, image_rows);
  }

  text = text + batch.text_rows_of(text_mod[2]) * attn->to_add_out->forward(text_attention);
  at::Tensor text_mlp_input = modulate(layer_norm_no_affine(text, 1e-6), batch.text_rows_of(text_mod[4]),
                                       batch.text_rows_of(text_mod[3]));
  text = text + batch.text_rows_of(text_mod[5]) * ff_context->forward(text_mlp_input);

  phase.switch_to(Phase::cache_io);
  finish_block_image_rows(batch, tokens, context.routers, block_index, image);
}

}  // namespace flashps
