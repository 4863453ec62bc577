#include "models/flux/flux_transformer.h"

#include <ATen/ATen.h>

#include "core/error.h"

namespace flashps {
namespace {

class NormOutImpl : public torch::nn::Module {
 public:
  explicit NormOutImpl(Linear linear) { register_module("linear", linear); }
};
TORCH_MODULE(NormOut);

}  // namespace

FluxTransformerImpl::FluxTransformerImpl(const FluxConfig& config) : config_(config) {
  const int64_t dim = config.inner_dim();
  x_embedder = register_module("x_embedder", Linear(config.in_channels, dim));
  context_embedder = register_module("context_embedder", Linear(config.joint_attention_dim, dim));
  time_text_embed = register_module(
      "time_text_embed",
      FluxTimeTextEmbedding(dim, config.pooled_projection_dim, config.guidance_embeds));
  torch::nn::ModuleList transformer_blocks, single_transformer_blocks;
  for (int64_t i = 0; i < config.num_layers; ++i) {
    double_blocks.push_back(FluxDoubleBlock(dim, config.num_attention_heads, config.attention_head_dim));
    transformer_blocks->push_back(double_blocks.back());
  }
  for (int64_t i = 0; i < config.num_single_layers; ++i) {
    single_blocks.push_back(FluxSingleBlock(dim, config.num_attention_heads, config.attention_head_dim));
    single_transformer_blocks->push_back(single_blocks.back());
  }
  register_module("transformer_blocks", transformer_blocks);
  register_module("single_transformer_blocks", single_transformer_blocks);
  norm_out_linear = Linear(dim, 2 * dim);
  register_module("norm_out", NormOut(norm_out_linear));
  proj_out = register_module("proj_out", Linear(dim, config.out_channels));
}

std::vector<at::Tensor> FluxTransformerImpl::forward(const std::vector<FluxRequest>& requests) const {
  if (requests.empty()) return {};
  // Activations are float32 whatever the weights' dtype: bfloat16 weights run their matrix
  // products in bfloat16 (core/linear.h), everything element-wise stays float32.
  const auto dtype = at::kFloat;
  const auto device = proj_out->weight.device();
  std::vector<std::pair<int64_t, int64_t>> counts;
  std::vector<at::Tensor> image_inputs, text_inputs, pooled, image_ids, text_ids;
  std::vector<double> timesteps, guidances;
  FluxBlockContext context;
  for (const FluxRequest& request : requests) {
    at::Tensor ids = request.img_ids;
    at::Tensor hidden = request.hidden_states;
    if (request.carried_rows.defined()) {
      at::Tensor rows = request.carried_rows.to(device, at::kLong);
      ids = ids.to(device).index_select(0, rows);
      hidden = hidden.to(device).index_select(0, rows);
    }
    counts.emplace_back(request.encoder_hidden_states.size(0), hidden.size(0));
    image_inputs.push_back(hidden.to(device, dtype));
    text_inputs.push_back(request.encoder_hidden_states.to(device, dtype));
    pooled.push_back(request.pooled_projections.to(device, dtype).reshape({1, -1}));
    image_ids.push_back(ids.to(at::kCPU));
    text_ids.push_back(request.txt_ids.to(at::kCPU));
    timesteps.push_back(request.timestep * 1000.0);
    guidances.push_back(request.guidance.value_or(0.0) * 1000.0);
    context.routers.push_back(request.router);
  }
  PackedBatch batch = PackedBatch::from_counts(counts, device);
  context.batch = &batch;

  auto float_options = at::TensorOptions().dtype(at::kFloat).device(device);
  at::Tensor timestep = at::tensor(timesteps, at::TensorOptions().dtype(at::kDouble)).to(float_options);
  at::Tensor guidance;
  if (config_.guidance_embeds) {
    for (const FluxRequest& request : requests)
      if (!request.guidance) throw Error("Flux model has guidance_embeds: every request needs a guidance scale");
    guidance = at::tensor(guidances, at::TensorOptions().dtype(at::kDouble)).to(float_options);
  }
  context.temb = time_text_embed->forward(timestep, guidance, at::cat(pooled));

  auto move = [&](RotaryTables tables) {
    return RotaryTables{tables.cos.to(device), tables.sin.to(device)};
  };
  context.text_rope = move(flux_rotary_tables(at::cat(text_ids), config_.axes_dims_rope));
  context.image_rope = move(flux_rotary_tables(at::cat(image_ids), config_.axes_dims_rope));

  at::Tensor image = x_embedder->forward(at::cat(image_inputs));
  at::Tensor text = context_embedder->forward(at::cat(text_inputs));
  int block_index = 0;
  for (const auto& block : double_blocks) block->forward(block_index++, context, text, image);
  context.stream_rope = {at::cat({context.text_rope.cos, context.image_rope.cos}),
                         at::cat({context.text_rope.sin, context.image_rope.sin})};
  context.stream_row_request = at::cat({batch.text_row_request, batch.image_row_request});
  at::Tensor stream = at::cat({text, image});
  for (const auto& block : single_blocks) block->forward(block_index++, context, stream);
  image = stream.narrow(0, batch.text_rows, batch.image_rows);

  auto scale_shift = norm_out_linear->forward(at::silu(context.temb)).chunk(2, 1);  // scale first
  at::Tensor normed = at::addcmul(batch.image_rows_of(scale_shift[1]),
                                  at::layer_norm(image, {image.size(1)}, {}, {}, 1e-6),
                                  batch.image_rows_of(scale_shift[0]) + 1);
  at::Tensor output = proj_out->forward(normed);

  std::vector<at::Tensor> outputs;
  for (size_t r = 0; r < requests.size(); ++r) {
    const RequestSlice& slice = batch.requests[r];
    at::Tensor carried = output.narrow(0, slice.image_begin, slice.image_count);
    outputs.push_back(requests[r].router ? requests[r].router->finish_output(carried)
                                         : carried.contiguous());
  }
  return outputs;
}

at::Tensor FluxTransformerImpl::forward_batched(const at::Tensor& hidden_states,
                                                const at::Tensor& encoder_hidden_states,
                                                const at::Tensor& pooled_projections,
                                                const at::Tensor& timestep, const at::Tensor& img_ids,
                                                const at::Tensor& txt_ids,
                                                const at::Tensor& guidance) const {
  std::vector<FluxRequest> requests;
  at::Tensor timesteps = timestep.to(at::kCPU, at::kDouble).reshape({-1});
  at::Tensor guidances = guidance.defined() ? guidance.to(at::kCPU, at::kDouble).reshape({-1}) : at::Tensor();
  for (int64_t b = 0; b < hidden_states.size(0); ++b) {
    FluxRequest request;
    request.hidden_states = hidden_states[b];
    request.encoder_hidden_states = encoder_hidden_states[b];
    request.pooled_projections = pooled_projections[b];
    request.img_ids = img_ids.dim() == 3 ? img_ids[b] : img_ids;
    request.txt_ids = txt_ids.dim() == 3 ? txt_ids[b] : txt_ids;
    request.timestep = timesteps[timesteps.numel() == 1 ? 0 : b].item<double>();
    if (guidances.defined()) request.guidance = guidances[guidances.numel() == 1 ? 0 : b].item<double>();
    requests.push_back(std::move(request));
  }
  std::vector<at::Tensor> outputs = forward(requests);
  return at::stack(outputs);
}

}  // namespace flashps
