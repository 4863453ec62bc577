#include "pipeline/sd_inpaint_pipeline.h"

#include <ATen/ATen.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_file.h"
#include "core/content_hash.h"
#include "core/mask_ops.h"
#include "models/model_files.h"
#include "models/unet/unet_block_work.h"
#include "pipeline/edit_number_checks.h"
#include "pipeline/image_tensors.h"
#include "pipeline/sd_edit_job.h"

namespace flashps {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int round_down(int value, int64_t multiple) {
  return static_cast<int>(std::max<int64_t>(multiple, (value / multiple) * multiple));
}

}  // namespace

bool is_stable_diffusion_folder(const std::string& dir) {
  const std::filesystem::path index = std::filesystem::path(dir) / "model_index.json";
  if (!std::filesystem::exists(index)) return false;
  const nlohmann::json json = read_json_file(index.string());
  return json.value("_class_name", std::string()).rfind("StableDiffusion", 0) == 0;
}

SDInpaintPipeline::SDInpaintPipeline(SDPipelineComponents components, std::shared_ptr<engine::CaptureStore> store)
    : components_(std::move(components)), store_(std::move(store)) {
  if (!store_) store_ = std::make_shared<engine::MemoryCaptureStore>();
  const UNetConfig& config = components_.unet->config();
  const int64_t latent_channels = components_.vae->latent_channels();
  if (config.out_channels != latent_channels)
    throw CorruptDataError(components_.model_dir + ": unet out_channels " + std::to_string(config.out_channels) +
                           " does not match the vae's latent_channels " + std::to_string(latent_channels));
  if (config.in_channels != latent_channels && config.in_channels != 2 * latent_channels + 1)
    throw UnsupportedError(components_.model_dir + ": unet in_channels " + std::to_string(config.in_channels) +
                           " is neither latents (" + std::to_string(latent_channels) + ") nor the inpainting layout (" +
                           std::to_string(2 * latent_channels + 1) + ")");
  if (components_.text.is_xl() != config.text_time_embedding)
    throw CorruptDataError(components_.model_dir +
                           ": an SDXL unet (text_time embeddings) needs text_encoder_2, and only it");
}

SDInpaintPipeline::~SDInpaintPipeline() = default;

int64_t SDInpaintPipeline::size_multiple() const {
  return components_.vae->scale_factor() * (int64_t(1) << (components_.unet->config().block_out_channels.size() - 1));
}

std::unique_ptr<SDInpaintPipeline> SDInpaintPipeline::load(const std::string& model_dir, at::ScalarType dtype,
                                                           std::shared_ptr<engine::CaptureStore> store) {
  namespace fs = std::filesystem;
  const fs::path index_path = fs::path(model_dir) / "model_index.json";
  if (!fs::exists(index_path))
    throw NotFoundError(model_dir + ": not a diffusers pipeline folder (no model_index.json)");
  const nlohmann::json index = read_json_file(index_path.string());
  auto component = [&](const char* name) -> std::string {
    const fs::path dir = fs::path(model_dir) / name;
    if (!index.contains(name) || index[name].is_null())
      throw UnsupportedError(index_path.string() + ": the pipeline lists no '" + name + "' component");
    if (!fs::is_directory(dir))
      throw NotFoundError(model_dir + ": pipeline folder has no '" + name + "' component (" + dir.string() + ")");
    return dir.string();
  };
  SDPipelineComponents components;
  components.model_dir = model_dir;
  components.unet = load_unet(component("unet"), dtype);
  components.vae = load_image_autoencoder(component("vae"), at::kFloat);
  components.text.tokenizer = ClipTokenizer::load(component("tokenizer"));
  components.text.text_encoder = load_clip_text_model(component("text_encoder"), dtype);
  if (index.contains("text_encoder_2") && !index["text_encoder_2"].is_null()) {
    components.text.tokenizer_2 = ClipTokenizer::load(component("tokenizer_2"));
    components.text.text_encoder_2 = load_clip_text_model(component("text_encoder_2"), dtype);
    components.force_zeros_for_empty_prompt = index.value("force_zeros_for_empty_prompt", true);
    components.default_guidance = 5.0;
  }
  const fs::path scheduler_config = fs::path(component("scheduler")) / "scheduler_config.json";
  if (!fs::exists(scheduler_config)) throw NotFoundError(model_dir + ": no scheduler/scheduler_config.json");
  components.scheduler = load_scheduler(scheduler_config.string());
  components.fingerprint = model_fingerprint(
      model_dir, {"unet", "vae", "scheduler", "text_encoder", "text_encoder_2", "tokenizer", "tokenizer_2"},
      {"unet", "vae", "text_encoder", "text_encoder_2"});
  return std::make_unique<SDInpaintPipeline>(std::move(components), std::move(store));
}

std::unique_ptr<EditJob> SDInpaintPipeline::start_edit(const EditRequest& request) {
  std::unique_ptr<SDEditJob> job = prepare_job(request, /*registering=*/false);
  if (!job->unchanged) attach_replay(*job);
  return job;
}

std::pair<at::Tensor, at::Tensor> SDInpaintPipeline::prepare_images(const EditRequest& given, SDEditJob& job) const {
  if (given.image.empty()) throw Error("edit request has no image");
  check_image(given.image, "template image");
  const int steps = steps_of(given);
  if (steps < 1 || steps > 1000) throw Error("steps must be between 1 and 1000");
  if (!(given.strength > 0.0 && given.strength <= 1.0)) throw Error("strength must be in (0, 1]");
  job.request = given;
  job.request.steps = steps;
  const EditRequest& request = job.request;
  EditStats& stats = job.stats_;
  job.original = to_rgb(request.image);
  const int width = job.original.width, height = job.original.height;
  Image mask = request.mask.empty() ? Image(width, height, 1, 0) : request.mask;
  if (!request.mask.empty()) check_image(mask, "mask");
  if (mask.width != width || mask.height != height) {
    stats.notes.push_back("mask resized to the image (nearest)");
    mask = resize_nearest(mask, width, height);
  }
  job.original_mask = binarize_mask(mask);
  if (request.conditioning.defined())
    stats.notes.push_back("Stable Diffusion folders encode text prompts: the prompt embeddings (" +
                          request.conditioning.source + ") are ignored");

  const int64_t multiple = size_multiple();
  job.width = round_down(width, multiple);
  job.height = round_down(height, multiple);
  job.resized = job.width != width || job.height != height;
  if (job.resized)
    stats.notes.push_back("processed at " + std::to_string(job.width) + "x" + std::to_string(job.height) +
                          " (this model needs sides in multiples of " + std::to_string(multiple) +
                          " pixels), result resized back");
  const Image processed = job.resized ? resize_bilinear(job.original, job.width, job.height) : job.original;
  const Image processed_mask =
      job.resized ? resize_nearest(job.original_mask, job.width, job.height) : job.original_mask;
  const at::Tensor image = image_to_tensor(processed).unsqueeze(0);
  const at::Tensor pixel_mask = mask_to_tensor(processed_mask).unsqueeze(0).unsqueeze(0);
  const int64_t factor = components_.vae->scale_factor();
  job.latent_mask = at::upsample_nearest2d(pixel_mask, {job.height / factor, job.width / factor});
  stats.width = job.width;
  stats.height = job.height;
  stats.mask_ratio = job.latent_mask.mean().item<double>();
  // Any masked pixel marks its latent token (max-pooling, not the nearest sample above).
  check_mask_settings(request, width, height, static_cast<int>(job.width / factor),
                      static_cast<int>(job.height / factor));
  job.token_mask = engine::token_mask_from_pixels(pixel_mask[0][0], factor, request.token_dilation);
  ContentHasher hasher;
  hasher.update(std::to_string(processed.width) + "x" + std::to_string(processed.height));
  hasher.update(processed.pixels.data(), processed.pixels.size());
  job.template_hash = hasher.hex();
  return {image, pixel_mask};
}

bool SDInpaintPipeline::has_template(const EditRequest& given) const {
  if (given.mode == ComputeMode::full) return false;
  if (given.mode == ComputeMode::kv)
    throw UnsupportedError(
        "cache kind 'kv' does not apply to UNet models (their ResNets are dense): use 'hidden' or 'auto'");
  at::NoGradGuard no_grad;
  SDEditJob job;
  prepare_images(given, job);
  // As start_edit and attach_replay decide: nothing to replay for an empty or a full mask.
  if (job.token_mask.empty() || job.token_mask.full()) return false;
  job.guidance = job.request.guidance_scale.value_or(components_.default_guidance);
  return store_->find(capture_id(job)) != nullptr;
}

std::unique_ptr<SDEditJob> SDInpaintPipeline::prepare_job(const EditRequest& given, bool registering) const {
  at::NoGradGuard no_grad;
  auto job = std::make_unique<SDEditJob>();
  job->started = std::chrono::steady_clock::now();
  const auto [image, pixel_mask] = prepare_images(given, *job);
  const EditRequest& request = job->request;
  EditStats& stats = job->stats_;
  const int64_t latent_height = job->latent_mask.size(2), latent_width = job->latent_mask.size(3);
  if (pixel_mask.max().item<float>() < 0.5f && !registering) {
    stats.notes.push_back("mask is empty: the template is returned unchanged");
    job->unchanged = true;
    return job;
  }

  // Text: [negative; positive] rows with guidance, as diffusers concatenates them.
  job->guidance = request.guidance_scale.value_or(components_.default_guidance);
  job->guided = job->guidance > 1.0;
  const EncodedPrompt positive = encode_prompt(components_.text, request.prompt);
  if (positive.truncated) stats.notes.push_back("prompt longer than 77 tokens: truncated (as diffusers does)");
  at::Tensor context = positive.embeds, pooled = positive.pooled;
  if (job->guided) {
    EncodedPrompt negative;
    if (request.negative_prompt.empty() && components_.force_zeros_for_empty_prompt) {
      negative.embeds = at::zeros_like(positive.embeds);
      if (positive.pooled.defined()) negative.pooled = at::zeros_like(positive.pooled);
    } else {
      negative = encode_prompt(components_.text, request.negative_prompt);
      if (negative.truncated) stats.notes.push_back("negative prompt longer than 77 tokens: truncated");
    }
    context = at::cat({negative.embeds, positive.embeds});
    if (pooled.defined()) pooled = at::cat({negative.pooled, positive.pooled});
  }
  job->context = context;
  if (components_.text.is_xl()) {
    job->text_embeds = pooled;
    // (original size, crop top-left, target size), all the processed size: no crop.
    const at::Tensor ids = at::tensor(std::vector<float>{float(job->height), float(job->width), 0.0f, 0.0f,
                                                         float(job->height), float(job->width)})
                               .unsqueeze(0);
    job->time_ids = ids.expand({context.size(0), 6}).contiguous();
  }

  const auto encode_start = std::chrono::steady_clock::now();
  if (is_inpainting_unet())
    job->masked_image_latents = components_.vae->encode_to_latents(image * (pixel_mask < 0.5).to(at::kFloat));
  if (!is_inpainting_unet() || request.strength < 1.0) job->image_latents = components_.vae->encode_to_latents(image);
  stats.encode_seconds += seconds_since(encode_start);

  job->scheduler = components_.scheduler->clone();
  job->scheduler->set_timesteps(request.steps);
  job->scheduler_state = job->scheduler->make_state();
  job->end_step = job->scheduler->num_steps();
  // diffusers get_timesteps: skip the first n - floor(n * strength) (times the solver order).
  const int init = std::min(static_cast<int>(request.steps * request.strength), request.steps);
  const int order = std::max(1, job->end_step / request.steps);
  job->next_step = std::max(request.steps - init, 0) * order;
  if (job->next_step >= job->end_step) throw Error("strength too low: no denoising step would run");
  auto generator = at::detail::createCPUGenerator(request.seed);
  job->noise = at::randn({1, components_.vae->latent_channels(), latent_height, latent_width}, generator);
  job->latents = request.strength >= 1.0 ? job->noise * job->scheduler->init_noise_sigma()
                                         : job->scheduler->add_noise(job->image_latents, job->noise, job->next_step);
  job->steps_total_ = job->end_step - job->next_step;
  // Rows the UNet processes per step (both guidance rows); the prompt is cross-attention
  // context, not token rows.
  job->image_tokens_ = job->rows() * latent_height * latent_width;
  job->masked_tokens_ = job->rows() * job->token_mask.masked_count();
  job->text_tokens_ = 0;
  stats.mode_used = ComputeMode::full;
  return job;
}

void SDInpaintPipeline::step(const std::vector<EditJob*>& jobs) {
  at::NoGradGuard no_grad;
  std::vector<SDEditJob*> all;
  for (EditJob* job : jobs) {
    auto* sd = dynamic_cast<SDEditJob*>(job);
    if (!sd) throw Error("Stable Diffusion pipeline: step() given a job of another pipeline");
    if (sd->denoised()) throw Error("Stable Diffusion pipeline: step() given a job that has finished denoising");
    all.push_back(sd);
  }
  const auto step_start = std::chrono::steady_clock::now();
  // A UNet is dense: one call per latent size, every job of that size in it.
  std::map<std::pair<int64_t, int64_t>, std::vector<SDEditJob*>> groups;
  for (SDEditJob* job : all) groups[{job->latents.size(2), job->latents.size(3)}].push_back(job);
  for (auto& [size, group] : groups) {
    std::vector<at::Tensor> samples, timesteps, contexts, text_embeds, time_ids;
    unet::UNetRouting routing;
    bool routed = false;
    for (SDEditJob* job : group) {
      const int rows = job->rows();
      const int64_t first_row = routing.requests.empty() ? 0 : routing.requests.back().first_row + routing.requests.back().rows;
      routing.requests.push_back({first_row, rows, job->router()});
      job->set_router_step(job->next_step);
      routed = routed || job->router();
      at::Tensor input = job->scheduler->scale_model_input(job->latents, job->next_step);
      if (is_inpainting_unet()) input = at::cat({input, job->latent_mask, job->masked_image_latents}, 1);
      samples.push_back(input.expand({rows, -1, -1, -1}));
      timesteps.push_back(job->scheduler->timesteps()[job->next_step].to(at::kFloat).reshape({1}).expand({rows}));
      contexts.push_back(job->context);
      if (job->text_embeds.defined()) {
        text_embeds.push_back(job->text_embeds);
        time_ids.push_back(job->time_ids);
      }
    }
    UNetInputs inputs;
    inputs.sample = at::cat(samples);
    inputs.timestep = at::cat(timesteps);
    inputs.encoder_hidden_states = at::cat(contexts);
    if (!text_embeds.empty()) {
      inputs.text_embeds = at::cat(text_embeds);
      inputs.time_ids = at::cat(time_ids);
    }
    if (routed) inputs.routing = &routing;
    last_step_assembly_seconds_ = seconds_since(step_start);
    const at::Tensor output = components_.unet->forward(inputs);
    int64_t row = 0;
    for (SDEditJob* job : group) {
      at::Tensor prediction;
      if (job->guided) {
        const at::Tensor unconditional = output.narrow(0, row, 1), conditional = output.narrow(0, row + 1, 1);
        prediction = unconditional + job->guidance * (conditional - unconditional);
        row += 2;
      } else {
        prediction = output.narrow(0, row++, 1);
      }
      const int step = job->next_step;
      job->latents = job->scheduler->step(prediction, step, job->latents, *job->scheduler_state);
      if (!is_inpainting_unet()) {  // latent blending: the template outside the mask
        const at::Tensor proper = step + 1 < job->end_step
                                      ? job->scheduler->add_noise(job->image_latents, job->noise, step + 1)
                                      : job->image_latents;
        job->latents = (1 - job->latent_mask) * proper + job->latent_mask * job->latents;
      }
    }
  }
  const double seconds = seconds_since(step_start);
  for (SDEditJob* job : all) {
    ++job->next_step;
    ++job->steps_done_;
    ++job->stats_.steps_run;
    job->stats_.denoise_seconds += seconds;
    try {
      report_progress(job->request.progress, {"denoise", job->steps_done_, job->steps_total_, job->stats_.denoise_seconds});
    } catch (...) {
      job->fail(std::current_exception());
    }
  }
}

EditResult SDInpaintPipeline::finish_edit(EditJob& base_job) {
  auto* job = dynamic_cast<SDEditJob*>(&base_job);
  if (!job) throw Error("Stable Diffusion pipeline: finish_edit() given a job of another pipeline");
  if (job->failed()) std::rethrow_exception(job->error());
  EditResult result;
  EditStats& stats = job->stats_;
  if (job->unchanged) {
    result.image = restore_alpha(job->original, job->request.image, Image());
  } else {
    if (!job->denoised()) throw Error("Stable Diffusion pipeline: finish_edit() before the last denoising step");
    if (job->replay) {
      const engine::ReplayStats& replay = job->replay->stats();
      stats.blocks_from_cache = replay.blocks_from_cache;
      stats.blocks_computed = replay.blocks_computed;
      stats.entries_failed = replay.entries_failed;
      stats.cache_bytes_loaded = replay.bytes_loaded;
      stats.load_wait_seconds = replay.load_wait_seconds;
      if (replay.entries_failed)
        stats.notes.push_back(std::to_string(replay.entries_failed) +
                              " cached entries were unreadable and computed instead (" + replay.first_error + ")");
      job->replay.reset();
    }
    at::NoGradGuard no_grad;
    const auto start = std::chrono::steady_clock::now();
    Image generated = tensor_to_image(components_.vae->decode_latents(job->latents)[0]);
    if (job->resized) generated = resize_bilinear(generated, job->original.width, job->original.height);
    Image alpha = job->original_mask;
    if (job->request.mask_grow_pixels > 0) alpha = grow_mask(alpha, job->request.mask_grow_pixels);
    if (job->request.mask_feather_pixels > 0) alpha = feather_mask(alpha, job->request.mask_feather_pixels);
    // The input's transparency is kept (opaque where regenerated); job->original is RGB.
    result.image = restore_alpha(composite(job->original, generated, alpha), job->request.image, alpha);
    stats.decode_seconds += seconds_since(start);
  }
  stats.total_seconds = seconds_since(job->started);
  result.stats = stats;
  return result;
}

engine::RequestWork SDInpaintPipeline::estimate_work(const EditRequest& request) const {
  engine::RequestWork work;
  work.steps = std::max(1, static_cast<int>(steps_of(request) * request.strength));
  const int64_t factor = components_.vae->scale_factor();
  const int64_t rows = request.guidance_scale.value_or(components_.default_guidance) > 1.0 ? 2 : 1;
  const int64_t latent_tokens = std::max<int64_t>(1, (request.image.width / factor) * (request.image.height / factor));
  const double ratio = request.mask.empty() ? 0.0 : mask_ratio(request.mask);
  work.image_tokens = rows * latent_tokens;
  work.masked_tokens = rows * std::min(latent_tokens, static_cast<int64_t>(std::ceil(ratio * double(latent_tokens))));
  work.text_tokens = 0;  // cross-attention context, not token rows
  work.cached = request.mode != ComputeMode::full;  // known once started: the template may not be registered
  return work;
}

std::function<Image()> SDInpaintPipeline::preview(const EditJob& base_job) const {
  const auto* job = dynamic_cast<const SDEditJob*>(&base_job);
  if (!job) throw Error("Stable Diffusion pipeline: preview() given a job of another pipeline");
  if (job->unchanged || !job->latents.defined()) {
    Image original = job->original;
    return [original] { return original; };
  }
  at::Tensor latents = job->latents.clone();
  std::shared_ptr<ImageAutoencoder> vae = components_.vae;
  return [latents, vae] {
    at::NoGradGuard no_grad;
    return tensor_to_image(vae->decode_latents(latents)[0]);
  };
}

PipelineCostProfile SDInpaintPipeline::cost_profile() const {
  const UNet2DConditionModel& unet = components_.unet;
  PipelineCostProfile profile;
  profile.family = "Stable Diffusion UNet";
  // Transformer blocks the engine shrinks plus the dense rest, with CLIP's 77 context tokens.
  profile.blocks = unet_latent_grid_work(unet->config(), 77, c10::elementSize(unet->dtype()));
  profile.cache_kind = engine::CacheKind::hidden;
  profile.speed = speed_;
  const int64_t latent_side = 512 / components_.vae->scale_factor();  // SD 1.x's native 512 px
  profile.image_tokens = 2 * latent_side * latent_side;  // both guidance rows
  profile.text_tokens = 0;  // the prompt is cross-attention context, not token rows
  profile.steps = 50;       // diffusers' default for SD inpainting
  return profile;
}

}  // namespace flashps
