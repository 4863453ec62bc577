#include "training/fill_trainer.h"

#include <ATen/ATen.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adamw.h>
#include <torch/serialize.h>

#include <chrono>
#include <cmath>
#include <deque>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <regex>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "core/files/tensor_io.h"
#include "models/flux/flux_transformer.h"
#include "pipeline/flux/fill_conditioning.h"
#include "pipeline/flux/flux_packing.h"
#include "schedulers/flow_match_euler_discrete.h"
#include "training/detail_loss.h"
#include "training/photo_set.h"
#include "workload/mask_ratio_trace.h"
#include "workload/random_masks.h"

namespace flashps::training {
namespace {

namespace fs = std::filesystem;

// DiT-style initialisation: uniform fan-in weights, zero biases, and zero AdaLN modulation and
// final projection so that every block starts as the identity and the output as zero.
void initialise(torch::nn::Module& model, uint64_t seed) {
  at::NoGradGuard no_grad;
  auto generator = at::detail::createCPUGenerator(seed);
  const std::regex zero_init(R"((^|\.)(norm1|norm1_context|norm|norm_out)\.linear\.|^proj_out\.)");
  for (auto& item : model.named_parameters(true)) {
    at::Tensor& parameter = item.value();
    const std::string& name = item.key();
    if (std::regex_search(name, zero_init)) {
      parameter.zero_();
    } else if (name.find("norm_q") != std::string::npos || name.find("norm_k") != std::string::npos ||
               name.find("norm_added") != std::string::npos) {
      parameter.fill_(1.0);
    } else if (parameter.dim() == 2) {
      const double bound = 1.0 / std::sqrt(double(parameter.size(1)));
      parameter.uniform_(-bound, bound, generator);
    } else {
      parameter.zero_();
    }
  }
}

struct TrainingState {
  FluxTransformer model{nullptr};
  at::Tensor prompt_embeds, pooled_prompt_embeds;
  std::vector<at::Tensor> ema;  // one per entry of named()
  int64_t step = 0, samples_seen = 0;
  std::deque<double> recent_losses;

  std::vector<std::pair<std::string, at::Tensor>> named() const {
    std::vector<std::pair<std::string, at::Tensor>> all;
    for (const auto& item : model->named_parameters(true)) all.emplace_back(item.key(), item.value());
    all.emplace_back("prompt_embeds", prompt_embeds);
    all.emplace_back("pooled_prompt_embeds", pooled_prompt_embeds);
    return all;
  }
  std::vector<at::Tensor> parameters() const {
    std::vector<at::Tensor> all;
    for (const auto& [name, tensor] : named()) all.push_back(tensor);
    return all;
  }
};

void load_into(const std::vector<std::pair<std::string, at::Tensor>>& targets, const std::string& path) {
  auto tensors = load_safetensors(path);
  at::NoGradGuard no_grad;
  for (const auto& [name, target] : targets) {
    auto found = tensors.find(name);
    if (found == tensors.end() || !found->second.sizes().equals(target.sizes()))
      throw Error(path + ": checkpoint does not match the model (tensor '" + name + "')");
    target.copy_(found->second);
  }
}

void save_checkpoint(const TrainingState& state, const torch::optim::AdamW& optimizer,
                     const FillTrainerOptions& options) {
  const fs::path root(options.output_dir);
  const fs::path fresh = root / "checkpoint.new", current = root / "checkpoint", previous = root / "checkpoint.old";
  fs::remove_all(fresh);
  fs::create_directories(fresh);
  save_safetensors((fresh / "weights.safetensors").string(), state.named());
  std::vector<std::pair<std::string, at::Tensor>> ema;
  auto names = state.named();
  for (size_t i = 0; i < names.size(); ++i) ema.emplace_back(names[i].first, state.ema[i]);
  save_safetensors((fresh / "ema.safetensors").string(), ema);
  torch::save(optimizer, (fresh / "optimizer.pt").string());
  nlohmann::json json = {{"step", state.step},
                         {"samples_seen", state.samples_seen},
                         {"seed", options.seed},
                         {"spec", options.spec.to_json()},
                         {"recent_losses", std::vector<double>(state.recent_losses.begin(), state.recent_losses.end())}};
  std::ofstream(fresh / "state.json") << json.dump(2) << "\n";
  // Swap in the new checkpoint without a moment where none is complete on disk.
  fs::remove_all(previous);
  if (fs::exists(current)) fs::rename(current, previous);
  fs::rename(fresh, current);
  fs::remove_all(previous);
}

bool load_checkpoint(TrainingState& state, torch::optim::AdamW& optimizer, const FillTrainerOptions& options) {
  const fs::path root(options.output_dir);
  fs::path dir = root / "checkpoint";
  if (!fs::exists(dir / "state.json")) dir = root / "checkpoint.old";  // interrupted swap
  if (!fs::exists(dir / "state.json")) return false;
  nlohmann::json json = read_json_file((dir / "state.json").string());
  if (json.at("spec") != options.spec.to_json())
    throw Error((dir / "state.json").string() + ": checkpoint was trained with a different model spec");
  if (json.at("seed").get<uint64_t>() != options.seed)
    throw Error((dir / "state.json").string() + ": checkpoint was trained with seed " +
                std::to_string(json.at("seed").get<uint64_t>()) + "; pass the same --seed to resume");
  load_into(state.named(), (dir / "weights.safetensors").string());
  std::vector<std::pair<std::string, at::Tensor>> ema;
  auto names = state.named();
  for (size_t i = 0; i < names.size(); ++i) ema.emplace_back(names[i].first, state.ema[i]);
  load_into(ema, (dir / "ema.safetensors").string());
  torch::load(optimizer, (dir / "optimizer.pt").string());
  state.step = json.at("step").get<int64_t>();
  state.samples_seen = json.at("samples_seen").get<int64_t>();
  for (double loss : json.at("recent_losses")) state.recent_losses.push_back(loss);
  return true;
}

bool has_checkpoint(const FillTrainerOptions& options) {
  const fs::path root(options.output_dir);
  return options.resume && (fs::exists(root / "checkpoint" / "state.json") || fs::exists(root / "checkpoint.old" / "state.json"));
}

double learning_rate_at(const FillTrainerOptions& options, int64_t step) {
  if (step < options.warmup_steps) return options.learning_rate * (step + 1) / options.warmup_steps;
  // Cosine decay to a tenth of the peak over the planned steps.
  const double progress = std::min(1.0, double(step - options.warmup_steps) /
                                            std::max<int64_t>(1, options.steps - options.warmup_steps));
  return options.learning_rate * (0.1 + 0.9 * 0.5 * (1 + std::cos(M_PI * progress)));
}

// The flow-matching sample of one training example: inputs and target of the model.
struct Example {
  FluxRequest request;
  at::Tensor target;        // noise - x0, [L, C]
  at::Tensor noisy;         // x_t, [L, C]
  double sigma = 1.0;
  at::Tensor token_weight;  // [L]
};

Example make_example(const TrainingState& state, const PatchAutoencoder& autoencoder, const at::Tensor& image,
                     const at::Tensor& mask, MaskedImageFill masked_image_fill, double sigma, at::Generator& generator,
                     double unmasked_weight) {
  Example example;
  at::Tensor clean = pack_latents(autoencoder.encode_to_latents(image.unsqueeze(0))[0]);
  at::Tensor noise = at::randn(clean.sizes(), generator);
  at::Tensor noisy = (1 - sigma) * clean + sigma * noise;
  const int64_t latent_height = image.size(1) / autoencoder.scale_factor();
  const int64_t latent_width = image.size(2) / autoencoder.scale_factor();
  example.request.hidden_states = noisy;
  example.request.conditioning = fill_conditioning(autoencoder, image, mask, masked_image_fill);
  example.request.encoder_hidden_states = state.prompt_embeds;
  example.request.pooled_projections = state.pooled_prompt_embeds;
  example.request.img_ids = flux_image_ids(latent_height, latent_width);
  example.request.txt_ids = at::zeros({state.prompt_embeds.size(0), 3});
  example.request.timestep = sigma;
  example.target = noise - clean;
  example.noisy = noisy;
  example.sigma = sigma;
  at::Tensor token_masked = pack_fill_mask(mask, autoencoder.scale_factor()).amax(1) > 0.5;
  example.token_weight = at::where(token_masked, at::ones({}), at::full({}, unmasked_weight));
  return example;
}

// The predicted and the true clean latents decoded to pixels by the linear patch autoencoder
// (no deblocking filter: the losses must see the token borders), with the token weights.
struct DecodedPair {
  at::Tensor predicted, truth;  // [3, H, W]
  at::Tensor token_weight;      // [token rows, token columns]
};

DecodedPair decode_pair(const PatchAutoencoder& autoencoder, const at::Tensor& predicted, const at::Tensor& clean,
                        const at::Tensor& token_weight, const at::Tensor& img_ids) {
  const int64_t token_rows = img_ids.select(1, 1).max().item<int64_t>() + 1;
  const int64_t token_columns = img_ids.select(1, 2).max().item<int64_t>() + 1;
  auto decode = [&](const at::Tensor& tokens) {
    return autoencoder.decode_latents_unfiltered(unpack_latents(tokens, token_rows * 2, token_columns * 2).unsqueeze(0))[0];
  };
  return {decode(predicted), decode(clean), token_weight.view({token_rows, token_columns})};
}

// Mean squared difference of horizontal and vertical pixel gradients between the decoded
// prediction and the decoded target, weighted like the tokens they lie in, in latent units.
at::Tensor edge_loss(const PatchAutoencoder& autoencoder, const DecodedPair& decoded) {
  const at::Tensor difference = decoded.predicted - decoded.truth;  // [3, H, W]
  const int64_t token_pixels = 2 * autoencoder.scale_factor();
  const at::Tensor pixel_weight = decoded.token_weight.repeat_interleave(token_pixels, 0).repeat_interleave(token_pixels, 1);
  auto weighted = [](const at::Tensor& squared, const at::Tensor& weight) { return (squared * weight).sum() / weight.sum(); };
  const at::Tensor horizontal = (difference.narrow(2, 1, difference.size(2) - 1) - difference.narrow(2, 0, difference.size(2) - 1)).pow(2).mean(0);
  const at::Tensor vertical = (difference.narrow(1, 1, difference.size(1) - 1) - difference.narrow(1, 0, difference.size(1) - 1)).pow(2).mean(0);
  const double scale = autoencoder.config().scaling_factor;
  return scale * scale *
         (weighted(horizontal, pixel_weight.narrow(1, 1, pixel_weight.size(1) - 1)) +
          weighted(vertical, pixel_weight.narrow(0, 1, pixel_weight.size(0) - 1)));
}

// Weights var^-exponent of the packed latent values (normalised to mean 1), the variances taken
// over random photo crops; deterministic for a seed, so a resumed run weighs alike.
at::Tensor latent_value_weights(const PatchAutoencoder& autoencoder, const PhotoSet& photos, double exponent,
                                uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<at::Tensor> tokens;
  for (int i = 0; i < 256; ++i)
    tokens.push_back(pack_latents(autoencoder.encode_to_latents(photos.random_crop(64, rng).unsqueeze(0))[0]));
  const at::Tensor variance = at::cat(tokens).to(at::kDouble).var(0).clamp_min(1e-8);
  at::Tensor weights = variance.pow(-exponent);
  return (weights / weights.mean()).to(at::kFloat);
}

}  // namespace

TrainingSummary train_fill_model(const FillTrainerOptions& options, const TrainingCallback& callback) {
  if (options.output_dir.empty()) throw Error("training: no output folder");
  if (options.crop_sizes.empty()) throw Error("training: no crop sizes");
  const int64_t token_pixels = options.spec.autoencoder.patch_size * 2;
  for (int64_t size : options.crop_sizes)
    if (size % token_pixels != 0)
      throw Error("training: crop size " + std::to_string(size) + " is not a multiple of " + std::to_string(token_pixels));
  const MaskedImageFill masked_image_fill = parse_masked_image_fill(options.spec.masked_image_fill, "training");
  fs::create_directories(options.output_dir);

  PhotoSet photos = PhotoSet::load(options.photo_folders, PhotoSplit::train, options.photo_options);
  if (photos.size() == 0) throw Error("training: no usable photos in the given folders");
  workload::MaskRatioTrace trace = options.trace_files.empty() ? workload::MaskRatioTrace::fallback() : workload::MaskRatioTrace::load(options.trace_files);
  // The autoencoder is fitted once (principal components of patches of 256 random training
  // crops) and kept beside the checkpoint, so a resumed run uses exactly the same one.
  const fs::path autoencoder_dir = fs::path(options.output_dir) / "autoencoder";
  std::shared_ptr<PatchAutoencoder> fitted;
  const bool fine_tuning = !options.init_from.empty() && !has_checkpoint(options);
  const fs::path autoencoder_source = options.resume && fs::exists(autoencoder_dir / "config.json") ? autoencoder_dir
                                      : fine_tuning ? fs::path(options.init_from) / "vae"  // the transformer's own
                                                    : fs::path();
  if (!autoencoder_source.empty()) {
    fitted = load_patch_autoencoder(autoencoder_source.string());
    if (fitted->config().patch_size != options.spec.autoencoder.patch_size ||
        fitted->latent_channels() != options.spec.autoencoder.channels())
      throw Error(autoencoder_source.string() + ": autoencoder does not match the model spec");
  } else {
    std::mt19937_64 rng(options.seed + 2);
    std::vector<at::Tensor> crops;
    for (int i = 0; i < 256; ++i) crops.push_back(photos.random_crop(64, rng));
    fitted = fit_patch_autoencoder(crops, options.spec.autoencoder.patch_size, options.spec.autoencoder.channels());
  }
  if (autoencoder_source != autoencoder_dir) write_patch_autoencoder(autoencoder_dir.string(), *fitted);
  const PatchAutoencoder& autoencoder = *fitted;
  const double base_shift = options.spec.scheduler_config.value("base_shift", 0.5);
  const double max_shift = options.spec.scheduler_config.value("max_shift", 1.15);
  const int base_length = options.spec.scheduler_config.value("base_image_seq_len", 256);
  const int max_length = options.spec.scheduler_config.value("max_image_seq_len", 4096);

  if (options.loss_target != "velocity" && options.loss_target != "sample")
    throw Error("training: loss target must be 'velocity' or 'sample', got '" + options.loss_target + "'");
  if (options.edge_loss_weight > 0 && options.loss_target != "sample")
    throw Error("training: the edge loss needs the 'sample' loss target");
  if (options.detail_loss_weight > 0 && options.loss_target != "sample")
    throw Error("training: the detail loss needs the 'sample' loss target");
  if (options.loss_target == "sample" && options.spec.prediction_type != "sample")
    throw Error("training: the 'sample' loss needs an x0-predicting model (prediction_type 'sample')");
  const bool sample_loss = options.loss_target == "sample";
  if (options.channel_balance > 0 && !sample_loss) throw Error("training: --channel-balance needs the 'sample' loss target");
  const at::Tensor value_weights =
      options.channel_balance > 0 ? latent_value_weights(autoencoder, photos, options.channel_balance, options.seed + 3)
                                  : at::Tensor();

  TrainingState state;
  state.model = FluxTransformer(options.spec.transformer);
  initialise(*state.model, options.seed);
  auto generator = at::detail::createCPUGenerator(options.seed + 1);
  state.prompt_embeds = at::randn({options.spec.text_tokens, options.spec.transformer.joint_attention_dim}, generator) * 0.02;
  state.pooled_prompt_embeds = at::zeros({options.spec.transformer.pooled_projection_dim});
  for (at::Tensor& parameter : state.parameters()) parameter.set_requires_grad(true);
  if (fine_tuning) {
    std::vector<std::pair<std::string, at::Tensor>> transformer;
    for (const auto& item : state.model->named_parameters(true)) transformer.emplace_back(item.key(), item.value());
    load_into(transformer, (fs::path(options.init_from) / "transformer" / "diffusion_pytorch_model.safetensors").string());
    load_into({{"prompt_embeds", state.prompt_embeds}, {"pooled_prompt_embeds", state.pooled_prompt_embeds}},
              (fs::path(options.init_from) / "empty_prompt_embeds.safetensors").string());
  }
  for (const at::Tensor& parameter : state.parameters()) state.ema.push_back(parameter.detach().clone());

  torch::optim::AdamW optimizer(state.parameters(),
                                torch::optim::AdamWOptions(options.learning_rate).betas({0.9, 0.99}).weight_decay(0.0));
  if (options.resume) load_checkpoint(state, optimizer, options);

  TrainingSummary summary;
  summary.first_step = state.step;
  summary.model_dir = (fs::path(options.output_dir) / "model").string();
  const auto start = std::chrono::steady_clock::now();
  nlohmann::json training_notes = {{"seed", options.seed}, {"loss_target", options.loss_target}};
  if (options.edge_loss_weight > 0) training_notes["edge_loss_weight"] = options.edge_loss_weight;
  if (options.detail_loss_weight > 0) training_notes["detail_loss_weight"] = options.detail_loss_weight;
  if (options.channel_balance > 0)
    training_notes["channel_balance"] = {{"exponent", options.channel_balance},
                                         {"weight_min", value_weights.min().item<double>()},
                                         {"weight_max", value_weights.max().item<double>()}};
  if (!options.init_from.empty()) training_notes["init_from"] = fs::path(options.init_from).filename().string();
  auto export_model = [&] {
    training_notes["steps"] = state.step;
    training_notes["samples_seen"] = state.samples_seen;
    // The exported model carries the EMA weights (smoother than the last step's).
    FluxTransformer exported(options.spec.transformer);
    at::NoGradGuard no_grad;
    auto names = state.named();
    std::map<std::string, at::Tensor> ema_by_name;
    for (size_t i = 0; i < names.size(); ++i) ema_by_name[names[i].first] = state.ema[i];
    for (auto& item : exported->named_parameters(true)) item.value().copy_(ema_by_name.at(item.key()));
    write_fill_model(summary.model_dir, options.spec, autoencoder, *exported, ema_by_name.at("prompt_embeds"),
                     ema_by_name.at("pooled_prompt_embeds"), at::kBFloat16,
                     training_notes);
  };

  while (state.step < options.steps) {
    const auto step_start = std::chrono::steady_clock::now();
    std::mt19937_64 rng(options.seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(state.step));
    auto noise_generator = at::detail::createCPUGenerator(rng());
    const int64_t crop = options.crop_sizes[std::uniform_int_distribution<size_t>(0, options.crop_sizes.size() - 1)(rng)];
    const int64_t tokens = (crop / token_pixels) * (crop / token_pixels);
    const int64_t batch = std::max<int64_t>(1, options.tokens_per_batch / tokens);
    const double mu = calculate_flux_shift(static_cast<int>(tokens), base_length, max_length, base_shift, max_shift);

    std::vector<Example> examples;
    for (int64_t i = 0; i < batch; ++i) {
      at::Tensor image = photos.random_crop(crop, rng);
      at::Tensor mask = workload::random_mask(crop, crop, trace.sample(rng), rng);
      // Timesteps half logit-normal (as Flux), half uniform: the logit-normal alone rarely
      // draws the low noise levels where the last sampling steps must remove the remaining
      // noise, and a small model then leaves visible grain. Shifted like the sampler's
      // schedule for this resolution.
      const bool uniform = std::uniform_int_distribution<int>(0, 1)(rng) == 1;
      const double t = uniform ? std::uniform_real_distribution<double>(0.0, 1.0)(rng)
                               : 1.0 / (1.0 + std::exp(-std::normal_distribution<double>(0.0, 1.0)(rng)));
      const double sigma = std::exp(mu) / (std::exp(mu) + (1.0 / t - 1.0));
      examples.push_back(make_example(state, autoencoder, image, mask, masked_image_fill, sigma, noise_generator,
                                      options.unmasked_loss_weight));
    }
    std::vector<FluxRequest> requests;
    for (const Example& example : examples) requests.push_back(example.request);
    std::vector<at::Tensor> outputs = state.model->forward(requests);
    at::Tensor loss = at::zeros({});
    for (size_t i = 0; i < examples.size(); ++i) {
      at::Tensor per_token;
      if (sample_loss) {
        // x0 = x_t - sigma * (noise - x0)
        at::Tensor clean = examples[i].noisy - examples[i].sigma * examples[i].target;
        at::Tensor squared = (outputs[i] - clean).pow(2);
        per_token = (value_weights.defined() ? squared * value_weights : squared).mean(1);
        if (options.edge_loss_weight > 0 || options.detail_loss_weight > 0) {
          const DecodedPair decoded =
              decode_pair(autoencoder, outputs[i], clean, examples[i].token_weight, examples[i].request.img_ids);
          if (options.edge_loss_weight > 0) loss = loss + options.edge_loss_weight * edge_loss(autoencoder, decoded);
          // Only the masked tokens: the unmasked ones are shown by the conditioning and pasted back.
          // Steps across token borders are left out: the exported deblocking filter smooths them.
          if (options.detail_loss_weight > 0)
            loss = loss + options.detail_loss_weight *
                              detail_matching_loss(decoded.predicted, decoded.truth, (decoded.token_weight >= 1).to(at::kFloat),
                                                   2 * autoencoder.scale_factor(), /*seam=*/2 * autoencoder.scale_factor());
        }
      } else {
        // On the velocity; an x0-predicting model's velocity is (x_t - x0) / sigma, with sigma
        // floored so near-clean samples do not dominate.
        at::Tensor velocity = outputs[i];
        if (options.spec.prediction_type == "sample")
          velocity = (examples[i].noisy - outputs[i]) / std::max(examples[i].sigma, 0.2);
        at::Tensor target = examples[i].target;
        if (options.spec.prediction_type == "sample" && examples[i].sigma < 0.2)
          target = target * (examples[i].sigma / 0.2);  // same floor on both sides: (x_t - x0) / 0.2
        per_token = (velocity - target).pow(2).mean(1);
      }
      loss = loss + (per_token * examples[i].token_weight).sum() / examples[i].token_weight.sum();
    }
    loss = loss / static_cast<double>(examples.size());

    optimizer.zero_grad();
    loss.backward();
    torch::nn::utils::clip_grad_norm_(state.parameters(), 1.0);
    for (auto& group : optimizer.param_groups())
      static_cast<torch::optim::AdamWOptions&>(group.options()).lr(learning_rate_at(options, state.step));
    optimizer.step();
    {
      at::NoGradGuard no_grad;
      const double decay = std::min(options.ema_decay, (1.0 + state.step) / (10.0 + state.step));
      const auto parameters = state.parameters();
      for (size_t i = 0; i < parameters.size(); ++i) state.ema[i].mul_(decay).add_(parameters[i].detach(), 1 - decay);
    }
    ++state.step;
    state.samples_seen += batch;
    const double loss_value = loss.item<double>();
    if (!std::isfinite(loss_value)) throw Error("training diverged at step " + std::to_string(state.step) + " (loss is not finite)");
    state.recent_losses.push_back(loss_value);
    if (state.recent_losses.size() > 50) state.recent_losses.pop_front();

    TrainingProgress progress;
    progress.step = state.step;
    progress.total_steps = options.steps;
    progress.loss = loss_value;
    progress.average_loss = std::accumulate(state.recent_losses.begin(), state.recent_losses.end(), 0.0) /
                            state.recent_losses.size();
    progress.seconds_per_step = std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start).count();
    progress.samples_seen = state.samples_seen;
    summary.final_average_loss = progress.average_loss;
    const bool keep_going = !callback || callback(progress);
    if (!keep_going || state.step % options.checkpoint_every == 0 || state.step == options.steps) {
      save_checkpoint(state, optimizer, options);
      export_model();
    }
    if (!keep_going) {
      summary.stopped_early = true;
      break;
    }
  }
  if (summary.first_step == state.step && !fs::exists(summary.model_dir)) export_model();
  summary.last_step = state.step;
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace flashps::training
