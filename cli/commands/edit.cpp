// `flashps edit` and `flashps template register`: thin wrappers over FluxInpaintPipeline.
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cache/activation_store.h"
#include "commands.h"
#include "core/error.h"
#include "core/image.h"
#include "model_choice.h"
#include "pipeline/flux_inpaint_pipeline.h"
#include "pipeline/sd_inpaint_pipeline.h"
#include "serve/device_selection.h"
#include "terminal_progress.h"

namespace flashps::cli {
namespace {

struct EditOptions {
  std::string image, mask, output, model, prompt_embeds, cache_mode = "auto", dtype = "fp32", device = "cpu";
  std::string prompt, negative_prompt;
  std::string cache_dir;
  std::string texture = "model";  // texture transfer: model (its folder's choice), on, off
  uint64_t seed = 0;
  int steps = 0, grow = 0, feather = 0, dilate = 0;  // steps 0: the model's recommendation
  double strength = 1.0, guidance = -1;
  bool quiet = false, json = false, no_cache = false, capture_kv = true, capture_hidden = true;
};

void add_shared_options(CLI::App* command, EditOptions& options, bool mask_required) {
  command->add_option("--image,-i", options.image, "Template image (PNG or JPEG)")->required();
  auto* mask = command->add_option("--mask,-m", options.mask,
                                   "Mask image, white = regenerate (resized with nearest if its size differs)");
  if (mask_required) mask->required();
  command->add_option("--model", options.model, "Model folder (diffusers layout); default: bundled model");
  command->add_option("--seed", options.seed, "Random seed")->capture_default_str();
  command->add_option("--steps", options.steps,
                      "Denoising steps (default: the model's recommendation; 28 unless its model_index.json names one)")
      ->check(CLI::Range(1, 1000));
  command->add_option("--strength", options.strength, "Denoising strength in (0, 1]")->capture_default_str();
  command->add_option("--guidance", options.guidance, "Guidance scale (guidance-distilled models)");
  command->add_option("--prompt,-p", options.prompt, "Text prompt (models with text encoders: Stable Diffusion folders)");
  command->add_option("--negative-prompt", options.negative_prompt, "Negative prompt (classifier-free guidance)");
  command->add_option("--prompt-embeds", options.prompt_embeds,
                      "safetensors with prompt_embeds and pooled_prompt_embeds (default: the model's "
                      "stored empty prompt)");
  command->add_option("--dtype", options.dtype, "Transformer precision: fp32 or bf16")
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->capture_default_str();
  command->add_option("--device", options.device,
                      "cpu, cuda (the first GPU), cuda:N, or auto (a GPU if there is one); Flux models")
      ->capture_default_str();
  command->add_option("--cache-dir", options.cache_dir, "Activation store directory (default: ~/.cache/flashps/store, or FLASHPS_CACHE_DIR)");
  command->add_flag("--quiet,-q", options.quiet, "No progress bar");
  command->add_flag("--json", options.json, "Print statistics as JSON");
}

EditRequest make_request(const EditOptions& options) {
  EditRequest request;
  request.image = read_image(options.image);
  if (!options.mask.empty()) request.mask = read_image(options.mask);
  if (!options.prompt_embeds.empty()) request.conditioning = load_conditioning(options.prompt_embeds);
  request.prompt = options.prompt;
  request.negative_prompt = options.negative_prompt;
  request.seed = options.seed;
  request.steps = options.steps;
  request.strength = options.strength;
  if (options.guidance >= 0) request.guidance_scale = options.guidance;
  request.mask_grow_pixels = options.grow;
  request.mask_feather_pixels = options.feather;
  request.token_dilation = options.dilate;
  if (options.texture != "model") request.texture_transfer = options.texture == "on";
  request.mode = compute_mode_from_name(options.cache_mode);
  request.progress = terminal_progress(options.quiet);
  return request;
}

std::shared_ptr<engine::CaptureStore> open_store(const EditOptions& options) {
  cache::ActivationStoreOptions store_options;
  store_options.directory = options.cache_dir.empty() ? cache::default_store_directory() : options.cache_dir;
  return cache::ActivationStore::open(store_options);
}

std::unique_ptr<SDInpaintPipeline> load_sd_pipeline(const EditOptions& options, const std::string& dir) {
  if (!serve::select_device(options.device).is_cpu())
    throw Error(dir + ": Stable Diffusion models run on the CPU only (--device cpu)");
  return SDInpaintPipeline::load(dir, options.dtype == "bf16" ? at::kBFloat16 : at::kFloat, open_store(options));
}

std::unique_ptr<FluxInpaintPipeline> load_pipeline(const EditOptions& options) {
  ModelChoice model = choose_model(options.model);
  auto pipeline =
      FluxInpaintPipeline::load(model.dir, options.dtype == "bf16" ? at::kBFloat16 : at::kFloat, open_store(options),
                                serve::select_device(options.device));
  if (pipeline->is_unconditional()) {
    if (!options.prompt_embeds.empty())
      std::cerr << "flashps: this model is unconditional (trained without prompts): --prompt-embeds is ignored\n";
  } else if (!pipeline->has_text_encoder() && !options.quiet)
    std::cerr << "flashps: this model has no text encoder: prompts are not used (stored empty-prompt "
                 "embeddings, or --prompt-embeds)\n";
  return pipeline;
}

nlohmann::json stats_json(const EditStats& stats) {
  return {{"width", stats.width},
          {"height", stats.height},
          {"steps_run", stats.steps_run},
          {"mask_ratio", stats.mask_ratio},
          {"mode", compute_mode_name(stats.mode_used)},
          {"cache_hit", stats.cache_hit},
          {"compute_saving", stats.compute_saving},
          {"blocks_from_cache", stats.blocks_from_cache},
          {"blocks_computed", stats.blocks_computed},
          {"entries_failed", stats.entries_failed},
          {"cache_bytes_loaded", stats.cache_bytes_loaded},
          {"seconds", {{"total", stats.total_seconds}, {"encode", stats.encode_seconds},
                       {"denoise", stats.denoise_seconds}, {"decode", stats.decode_seconds}}},
          {"notes", stats.notes}};
}

void print_notes(const EditStats& stats) {
  for (const auto& note : stats.notes) std::cerr << "flashps: note: " << note << "\n";
}

}  // namespace

void add_edit_command(CLI::App& app, CommandAction& action) {
  static EditOptions options;
  CLI::App* edit = app.add_subcommand("edit", "Regenerate the masked region of an image");
  add_shared_options(edit, options, /*mask_required=*/true);
  edit->add_option("--out,-o", options.output, "Output image (.png or .jpg)")->required();
  edit->add_option("--cache", options.cache_mode,
                   "auto (reuse a registered template), full, kv or hidden")
      ->check(CLI::IsMember({"auto", "full", "kv", "hidden"}))
      ->capture_default_str();
  edit->add_option("--grow", options.grow, "Grow the paste-back mask by N pixels");
  edit->add_option("--feather", options.feather, "Feather the paste-back mask by N pixels");
  edit->add_option("--dilate", options.dilate, "Recompute K extra tokens around the mask");
  edit->add_option("--texture", options.texture,
                   "Fine detail of the fill copied from the surroundings: on, off, or model (as the model's "
                   "folder recommends)")
      ->check(CLI::IsMember({"model", "on", "off"}))
      ->capture_default_str();
  edit->callback([&action] {
    action = [] {
      EditRequest request = make_request(options);
      const ModelChoice model = choose_model(options.model);
      EditResult result;
      if (is_stable_diffusion_folder(model.dir)) {
        if (options.cache_mode == "kv")
          throw Error(model.dir + ": --cache kv does not apply to UNet models (their ResNets are dense); use hidden or auto");
        result = load_sd_pipeline(options, model.dir)->edit(request);
      } else {
        auto pipeline = load_pipeline(options);
        result = pipeline->edit(request);
      }
      finish_progress_line(options.quiet);
      write_image(options.output, result.image);
      print_notes(result.stats);
      if (options.json) {
        std::cout << stats_json(result.stats).dump(2) << "\n";
      } else if (!options.quiet) {
        char hit[96] = "";
        if (result.stats.cache_hit)
          std::snprintf(hit, sizeof(hit), ", template cache hit: %.1fx less compute per step",
                        result.stats.compute_saving);
        std::printf("wrote %s (%dx%d, mask %.1f%%, %d step%s, %s%s, %.2f s: denoise %.2f s)\n", options.output.c_str(),
                    result.image.width, result.image.height, 100 * result.stats.mask_ratio, result.stats.steps_run,
                    result.stats.steps_run == 1 ? "" : "s",
                    compute_mode_name(result.stats.mode_used), hit, result.stats.total_seconds,
                    result.stats.denoise_seconds);
      }
      return 0;
    };
  });
}

void add_template_commands(CLI::App& app, CommandAction& action) {
  static EditOptions options;
  CLI::App* templates = app.add_subcommand("template", "Template captures for mask-aware edits");
  templates->require_subcommand(1);
  CLI::App* reg = templates->add_subcommand(
      "register", "Run a template in full and capture its activations for later edits");
  add_shared_options(reg, options, /*mask_required=*/false);
  reg->add_flag("!--no-kv", options.capture_kv, "Do not capture keys/values (kv cache kind)");
  reg->add_flag("!--no-hidden", options.capture_hidden, "Do not capture block outputs (hidden cache kind)");
  reg->callback([&action] {
    action = [] {
      EditRequest request = make_request(options);
      const ModelChoice model = choose_model(options.model);
      TemplateInfo info;
      if (is_stable_diffusion_folder(model.dir)) {
        if (!options.capture_hidden)
          throw Error(model.dir + ": UNet templates capture block outputs only; --no-hidden leaves nothing to capture");
        info = load_sd_pipeline(options, model.dir)->register_template(request);
      } else {
        info = load_pipeline(options)->register_template(request, options.capture_kv, options.capture_hidden);
      }
      finish_progress_line(options.quiet);
      print_notes(info.stats);
      if (options.json) {
        std::cout << nlohmann::json{{"template", info.template_hash}, {"config", info.config},
                                    {"bytes", info.bytes}, {"seconds", info.seconds}}
                         .dump(2)
                  << "\n";
      } else if (!options.quiet) {
        std::printf("registered template %s (%s): %.1f MB captured in %.2f s\n", info.template_hash.substr(0, 12).c_str(),
                    info.config.c_str(), info.bytes / 1e6, info.seconds);
      }
      return 0;
    };
  });
}

}  // namespace flashps::cli
