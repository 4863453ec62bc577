#include "models/flux/flux_transformer.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "core/diagnostics/error.h"
#include "core/kernels/linear.h"
#include "core/diagnostics/phase_profile.h"
#include "core/kernels/row_packing.h"
#include "core/runtime/thread_clock.h"

namespace flashps {
namespace {

class NormOutImpl : public torch::nn::Module {
 public:
  explicit NormOutImpl(Linear linear) { register_module("linear", linear); }
};
TORCH_MODULE(NormOut);

FluxTransformerImpl::InputPacking& thread_input_packing() {
  thread_local FluxTransformerImpl::InputPacking packing;
  return packing;
}

}  // namespace

FluxTransformerImpl::InputPacking FluxTransformerImpl::last_input_packing() { return thread_input_packing(); }

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
  const auto device = proj_out->weight_device();
  RotaryTables tables = flux_rotary_tables(ids.to(at::kCPU), config_.axes_dims_rope);
  return {tables.cos.to(device), tables.sin.to(device)};
}

at::Tensor FluxTransformerImpl::conditioning_embedding(const at::Tensor& conditioning, const at::Tensor& rows) const {
  const auto device = proj_out->weight_device();
  const int64_t channels = conditioning.size(1), first_column = config_.in_channels - channels;
  if (conditioning.dim() != 2 || first_column <= 0)
    throw Error("Flux transformer: conditioning has " + std::to_string(channels) + " channels, the model takes " +
                std::to_string(config_.in_channels) + " in all");
  at::Tensor selected = conditioning.to(device, at::kFloat);
  if (rows.defined()) selected = selected.index_select(0, rows.to(device, at::kLong));
  return linear(selected, x_embedder->weight_columns(first_column, channels), x_embedder->bias);
}

const at::Tensor& ConditioningEmbeddingCache::get(const FluxTransformerImpl& model, const at::Tensor& conditioning,
                                                  const at::Tensor& carried_rows) {
  const bool current = embedding.defined() && carried_rows.defined() == rows.defined() &&
                       (!carried_rows.defined() || carried_rows.is_same(rows));
  if (!current) {
    at::NoGradGuard no_grad;
    embedding = model.conditioning_embedding(conditioning, carried_rows);
    rows = carried_rows;
  }
  return embedding;
}

std::vector<at::Tensor> FluxTransformerImpl::forward(const std::vector<FluxRequest>& requests) const {
  if (requests.empty()) return {};
  std::optional<PhaseTimer> phase(std::in_place, Phase::embed_and_out);
  const auto packing_start = std::chrono::steady_clock::now();
  const double packing_cpu_start = thread_cpu_seconds();
  // Activations are float32 whatever the weights' dtype: bfloat16 weights run their matrix
  // products in bfloat16 (core/kernels/linear.h), everything element-wise stays float32.
  const auto dtype = at::kFloat;
  const auto device = proj_out->weight_device();
  std::vector<std::pair<int64_t, int64_t>> counts;
  std::vector<at::Tensor> pooled;
  std::vector<double> timesteps, guidances;
  // Each request's rows of each packed input; destination rows are filled in once the batch's
  // layout is known.
  std::vector<RowBlock> latents, embeddings, text_inputs, text_cos, text_sin, image_cos, image_sin;
  std::vector<std::pair<int64_t, std::vector<RowBlock>>> conditioning_by_column;  // one group in practice
  FluxBlockContext context;
  for (const FluxRequest& request : requests) {
    const bool embedded = request.conditioning_embedding.defined();
    if (embedded != requests.front().conditioning_embedding.defined())
      throw Error("Flux transformer: a batch mixes requests with and without a conditioning embedding");
    if (embedded && request.conditioning.defined())
      throw Error("Flux transformer: a request has both its conditioning and its embedding");
    if (embedded && request.hidden_states.size(1) != requests.front().hidden_states.size(1))
      throw Error("Flux transformer: requests with conditioning embeddings differ in latent channels");
    const int64_t channels = request.hidden_states.size(1) +
                             (request.conditioning.defined() ? request.conditioning.size(1) : 0);
    if (embedded ? channels >= config_.in_channels : channels != config_.in_channels)
      throw Error("Flux transformer: image tokens have " + std::to_string(channels) + " channels, the model takes " +
                  std::to_string(config_.in_channels));
    if (request.conditioning.defined() && request.conditioning.size(0) != request.hidden_states.size(0))
      throw Error("Flux transformer: conditioning and hidden states differ in token count");
    at::Tensor rows;
    if (request.carried_rows.defined()) rows = request.carried_rows.to(device, at::kLong);
    latents.push_back({request.hidden_states.to(device, dtype), rows});
    const int64_t carried = rows.defined() ? rows.size(0) : request.hidden_states.size(0);
    if (embedded) {
      if (request.conditioning_embedding.dim() != 2 || request.conditioning_embedding.size(0) != carried ||
          request.conditioning_embedding.size(1) != config_.inner_dim())
        throw Error("Flux transformer: a conditioning embedding is not [" + std::to_string(carried) + ", " +
                    std::to_string(config_.inner_dim()) + "] (one row per carried image token)");
      embeddings.push_back({request.conditioning_embedding.to(device, dtype)});
    }
    if (request.image_rope) {
      image_cos.push_back({request.image_rope->cos, rows});
      image_sin.push_back({request.image_rope->sin, rows});
    } else {
      const RotaryTables tables =
          rotary_tables(rows.defined() ? request.img_ids.to(device).index_select(0, rows) : request.img_ids);
      image_cos.push_back({tables.cos});
      image_sin.push_back({tables.sin});
    }
    const RotaryTables text_tables = request.text_rope ? *request.text_rope : rotary_tables(request.txt_ids);
    text_cos.push_back({text_tables.cos});
    text_sin.push_back({text_tables.sin});
    text_inputs.push_back({request.encoder_hidden_states.to(device, dtype)});
    counts.emplace_back(request.encoder_hidden_states.size(0), carried);
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

  // Every packed input is written once, row by row: image tokens (carried rows only) with their
  // conditioning beside them, text tokens, and the RoPE tables in the single stream's layout
  // (text rows, then image rows), whose halves the double-stream blocks use as they are.
  for (size_t r = 0; r < requests.size(); ++r) {
    const RequestSlice& slice = batch.requests[r];
    if (!embeddings.empty()) embeddings[r].destination_row = slice.image_begin;
    latents[r].destination_row = image_cos[r].destination_row = image_sin[r].destination_row = slice.image_begin;
    text_inputs[r].destination_row = text_cos[r].destination_row = text_sin[r].destination_row = slice.text_begin;
    image_cos[r].destination_row += batch.text_rows;
    image_sin[r].destination_row += batch.text_rows;
  }
  for (size_t r = 0; r < requests.size(); ++r) {
    if (!requests[r].conditioning.defined()) continue;
    const int64_t column = requests[r].hidden_states.size(1);
    auto group = std::find_if(conditioning_by_column.begin(), conditioning_by_column.end(),
                              [&](const auto& entry) { return entry.first == column; });
    if (group == conditioning_by_column.end())
      group = conditioning_by_column.insert(conditioning_by_column.end(), {column, {}});
    group->second.push_back({requests[r].conditioning.to(device, dtype), latents[r].rows, latents[r].destination_row});
  }
  const bool embedded = !embeddings.empty();
  const int64_t input_channels = embedded ? requests.front().hidden_states.size(1) : config_.in_channels;
  at::Tensor image_input = at::empty({batch.image_rows, input_channels}, float_options);
  pack_rows(image_input, 0, latents);
  for (const auto& [column, blocks] : conditioning_by_column) pack_rows(image_input, column, blocks);
  at::Tensor text_input = at::empty({batch.text_rows, config_.joint_attention_dim}, float_options);
  pack_rows(text_input, 0, text_inputs);
  const int64_t stream_rows = batch.text_rows + batch.image_rows, pairs = config_.attention_head_dim / 2;
  context.stream_rope = {at::empty({stream_rows, pairs}, float_options), at::empty({stream_rows, pairs}, float_options)};
  pack_rows(context.stream_rope.cos, 0, text_cos);
  pack_rows(context.stream_rope.cos, 0, image_cos);
  pack_rows(context.stream_rope.sin, 0, text_sin);
  pack_rows(context.stream_rope.sin, 0, image_sin);
  context.text_rope = {context.stream_rope.cos.narrow(0, 0, batch.text_rows),
                       context.stream_rope.sin.narrow(0, 0, batch.text_rows)};
  context.image_rope = {context.stream_rope.cos.narrow(0, batch.text_rows, batch.image_rows),
                        context.stream_rope.sin.narrow(0, batch.text_rows, batch.image_rows)};
  thread_input_packing() = {std::chrono::duration<double>(std::chrono::steady_clock::now() - packing_start).count(),
                         thread_cpu_seconds() - packing_cpu_start};

  context.temb = time_text_embed->forward(timestep, guidance, pooled_input);
  at::Tensor image;
  if (embedded) {
    // The constant conditioning term starts each request's rows, as a bias would; the step
    // adds only the latents' product.
    image = at::empty({batch.image_rows, config_.inner_dim()}, float_options);
    pack_rows(image, 0, embeddings);
    linear_accumulate(image, image_input, x_embedder->weight_columns(0, input_channels));
  } else {
    image = x_embedder->forward(image_input);
  }
  at::Tensor text = context_embedder->forward(text_input);
  int block_index = 0;
  phase.reset();  // the blocks time their own phases
  for (const auto& block : double_blocks) block->forward(block_index++, context, text, image);
  phase.emplace(Phase::output_mlp);
  context.stream_row_request = at::cat({batch.text_row_request, batch.image_row_request});
  at::Tensor stream = at::cat({text, image});
  phase.reset();
  for (const auto& block : single_blocks) block->forward(block_index++, context, stream);
  phase.emplace(Phase::embed_and_out);
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
