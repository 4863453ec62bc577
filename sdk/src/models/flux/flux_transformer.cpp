#include "models/flux/flux_transformer.h"

#include <ATen/ATen.h>

#include <chrono>

#include "core/error.h"
#include "core/thread_clock.h"

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

RotaryTables FluxTransformerImpl::rotary_tables(const at::Tensor& ids) const {
  const auto device = proj_out->weight.device();
  RotaryTables tables = flux_rotary_tables(ids.to(at::kCPU), config_.axes_dims_rope);
  return {tables.cos.to(device), tables.sin.to(device)};
}

std::vector<at::Tensor> FluxTransformerImpl::forward(const std::vector<FluxRequest>& requests) const {
  if (requests.empty()) return {};
  const auto packing_start = std::chrono::steady_clock::now();
  const double packing_cpu_start = thread_cpu_seconds();
  // Activations are float32 whatever the weights' dtype: bfloat16 weights run their matrix
  // products in bfloat16 (core/linear.h), everything element-wise stays float32.
  const auto dtype = at::kFloat;
  const auto device = proj_out->weight.device();
  std::vector<std::pair<int64_t, int64_t>> counts;
  std::vector<at::Tensor> text_inputs, pooled, image_cos, image_sin, text_cos, text_sin;
  std::vector<double> timesteps, guidances;
  FluxBlockContext context;
  std::vector<at::Tensor> carried_rows;
  int64_t image_rows = 0;
  for (const FluxRequest& request : requests) {
    at::Tensor ids = request.img_ids;
    const int64_t channels = request.hidden_states.size(1) +
                             (request.conditioning.defined() ? request.conditioning.size(1) : 0);
    if (channels != config_.in_channels)
      throw Error("Flux transformer: image tokens have " + std::to_string(channels) + " channels, the model takes " +
                  std::to_string(config_.in_channels));
    if (request.conditioning.defined() && request.conditioning.size(0) != request.hidden_states.size(0))
      throw Error("Flux transformer: conditioning and hidden states differ in token count");
    at::Tensor rows;
    if (request.carried_rows.defined()) rows = request.carried_rows.to(device, at::kLong);
    if (request.image_rope) {
      const RotaryTables& tables = *request.image_rope;
      image_cos.push_back(rows.defined() ? tables.cos.index_select(0, rows) : tables.cos);
      image_sin.push_back(rows.defined() ? tables.sin.index_select(0, rows) : tables.sin);
    } else {
      const RotaryTables tables = rotary_tables(rows.defined() ? ids.to(device).index_select(0, rows) : ids);
      image_cos.push_back(tables.cos);
      image_sin.push_back(tables.sin);
    }
    const RotaryTables text_tables = request.text_rope ? *request.text_rope : rotary_tables(request.txt_ids);
    text_cos.push_back(text_tables.cos);
    text_sin.push_back(text_tables.sin);
    const int64_t count = rows.defined() ? rows.size(0) : request.hidden_states.size(0);
    counts.emplace_back(request.encoder_hidden_states.size(0), count);
    carried_rows.push_back(rows);
    image_rows += count;
    text_inputs.push_back(request.encoder_hidden_states.to(device, dtype));
    pooled.push_back(request.pooled_projections.to(device, dtype).reshape({1, -1}));
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
  at::Tensor pooled_input = at::cat(pooled);

  auto packed = [&](const std::vector<at::Tensor>& parts) { return at::cat(parts).to(device); };
  context.text_rope = {packed(text_cos), packed(text_sin)};
  context.image_rope = {packed(image_cos), packed(image_sin)};

  // Every request's image tokens (carried rows only) and conditioning, copied once into one input.
  at::Tensor image_input = at::empty({image_rows, config_.in_channels}, float_options);
  int64_t row = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    const at::Tensor& rows = carried_rows[i];
    at::Tensor destination = image_input.narrow(0, row, counts[i].second);
    auto copy_columns = [&](const at::Tensor& source, int64_t first_column) {
      at::Tensor part = source.to(device);
      if (rows.defined()) part = part.index_select(0, rows);
      destination.narrow(1, first_column, source.size(1)).copy_(part);
    };
    copy_columns(requests[i].hidden_states, 0);
    if (requests[i].conditioning.defined()) copy_columns(requests[i].conditioning, requests[i].hidden_states.size(1));
    row += counts[i].second;
  }
  at::Tensor text_input = at::cat(text_inputs);
  last_input_packing_ = {std::chrono::duration<double>(std::chrono::steady_clock::now() - packing_start).count(),
                         thread_cpu_seconds() - packing_cpu_start};

  context.temb = time_text_embed->forward(timestep, guidance, pooled_input);
  at::Tensor image = x_embedder->forward(image_input);
  at::Tensor text = context_embedder->forward(text_input);
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
