// `flashps edit` and `flashps template register`: one editor (any model folder the SDK opens;
// the bundled model by default) over the activation store.
#include <flashps/flashps.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "commands.h"
#include "model_options.h"
#include "terminal_progress.h"

namespace flashps::cli {
namespace {

namespace fps = flashps::sdk;

struct EditCommandOptions {
  std::string image, mask, output, prompt_embeds, cache_mode = "auto", dtype = "fp32", device = "cpu";
  ModelPathOptions model;  // --model and the files beside a single-file model
  std::string prompt, negative_prompt;
  int max_sequence_length = 0;
  std::string cache_dir;
  std::string texture = "model";  // texture transfer: model (its folder's choice), on, off
  // As typed: parsed strictly (CLI11 would wrap "-1" and saturate overflow); the SDK owns the ranges.
  std::string seed = "0", grow = "0", feather = "0", dilate = "0";
  int steps = 0;  // 0: the model's recommendation
  double strength = 1.0, guidance = -1;
  bool quiet = false, json = false, capture_kv = true, capture_hidden = true;
};

void add_shared_options(CLI::App* command, EditCommandOptions& options, bool mask_required) {
  command->add_option("--image,-i", options.image, "Template image (PNG or JPEG)")->required();
  auto* mask = command->add_option("--mask,-m", options.mask,
                                   "Mask image, white = regenerate (resized with nearest if its size differs)");
  if (mask_required) mask->required();
  add_model_options(command, options.model);
  command->add_option("--seed", options.seed, "Random seed, 0 to 2^64-1")->capture_default_str();
  command->add_option("--steps", options.steps,
                      "Denoising steps, 1 to " + std::to_string(FLASHPS_MAX_STEPS) +
                          " (default: the model's recommendation; 28 unless its model_index.json names one)");
  command->add_option("--strength", options.strength, "Denoising strength in (0, 1]")->capture_default_str();
  command->add_option("--guidance", options.guidance,
                      "Guidance scale, 0 to " + std::to_string(FLASHPS_MAX_GUIDANCE_SCALE) +
                          " (default: the model's)");
  command->add_option("--prompt,-p", options.prompt, "Text prompt (folders with text encoders: Stable Diffusion, Flux with text_encoder_2)");
  command->add_option("--negative-prompt", options.negative_prompt, "Negative prompt (classifier-free guidance)");
  command->add_option("--max-sequence-length", options.max_sequence_length,
                      "Flux with text encoders: T5 tokens the prompt is encoded to, 1 to " +
                          std::to_string(FLASHPS_MAX_SEQUENCE_LENGTH) + " (default: the model's)");
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

bool all_digits(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// 0 to 2^64 - 1, decimal digits only: no sign, no wrap-around, no saturation.
uint64_t parse_seed(const std::string& text) {
  const std::string range = "a whole number from 0 to 18446744073709551615";
  if (!all_digits(text)) throw std::invalid_argument("--seed: '" + text + "' is not a seed; it must be " + range);
  errno = 0;
  const unsigned long long value = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE) throw std::invalid_argument("--seed: " + text + " is too large; it must be " + range);
  return value;
}

// A whole number that fits an int, sign allowed (the SDK says which values it accepts).
int parse_count(const char* option, const std::string& text) {
  const bool negative = !text.empty() && text[0] == '-';
  const std::string digits = negative ? text.substr(1) : text;
  if (!all_digits(digits))
    throw std::invalid_argument(std::string(option) + ": '" + text + "' is not a whole number of pixels");
  const long long value = digits.size() > 10 ? INT64_MAX : std::stoll(digits);
  if (value > INT_MAX) throw std::invalid_argument(std::string(option) + ": " + text + " is out of range");
  return static_cast<int>(negative ? -value : value);
}

// The SDK names its fields ("flashps_edit_params.mask_grow_pixels is -5; ...", or for the bounds
// that depend on the image "mask_grow_pixels is 33; for this 32x32 image ..."); say which option.
[[noreturn]] void rethrow_naming_option(const fps::Error& error) {
  static const std::pair<const char*, const char*> fields[] = {
      {"steps", "--steps"},          {"strength", "--strength"},           {"guidance_scale", "--guidance"},
      {"mask_grow_pixels", "--grow"}, {"mask_feather_pixels", "--feather"}, {"token_dilation", "--dilate"},
      {"max_sequence_length", "--max-sequence-length"}, {"cache_mode", "--cache"}};
  const std::string message = error.what();
  if (error.status() == FLASHPS_INVALID_ARGUMENT)
    for (const auto& [field, option] : fields)
      if (message.rfind(std::string("flashps_edit_params.") + field + " ", 0) == 0 ||
          message.rfind(std::string(field) + " is ", 0) == 0)
        throw std::invalid_argument(std::string(option) + ": " + message);
  throw error;
}

fps::EditOptions edit_options(const EditCommandOptions& options) {
  fps::EditOptions edit;
  edit.seed = parse_seed(options.seed);
  edit.steps = options.steps;
  edit.strength = static_cast<float>(options.strength);
  if (options.guidance >= 0) edit.guidance_scale = static_cast<float>(options.guidance);
  edit.mask_grow_pixels = parse_count("--grow", options.grow);
  edit.mask_feather_pixels = parse_count("--feather", options.feather);
  edit.token_dilation = parse_count("--dilate", options.dilate);
  try {
    edit.cache_mode = fps::cache_mode_from_name(options.cache_mode);
  } catch (const fps::Error& error) {
    throw std::invalid_argument(std::string("--cache: ") + error.what());
  }
  edit.prompt = options.prompt;
  edit.negative_prompt = options.negative_prompt;
  edit.max_sequence_length = options.max_sequence_length;
  edit.prompt_embeds_path = options.prompt_embeds;
  if (options.texture != "model") edit.texture_transfer = options.texture == "on";
  edit.progress = terminal_progress(options.quiet);
  try {
    edit.check();  // the SDK's rules, before a model is loaded
  } catch (const fps::Error& error) {
    rethrow_naming_option(error);
  }
  return edit;
}

// Opens the activation store and prints what opening it found (a read-only folder, a full disk,
// a damaged index set aside). An edit does not need the store: if it cannot be opened the edit
// runs in full; registering does need it.
fps::Store open_store(const EditCommandOptions& options, bool needed) {
  fps::StoreOptions store_options;
  store_options.directory = options.cache_dir;  // empty: the SDK's default store
  try {
    fps::Store store = fps::Store::open(store_options);
    for (const std::string& note : store.notes()) std::cerr << "flashps: note: " << note << "\n";
    return store;
  } catch (const fps::Error& error) {
    if (needed) throw;
    std::cerr << "flashps: note: " << error.what() << "; this edit runs in full without the activation store\n";
    return {};
  }
}

// The editor and the store it captures into; the SDK detects the model's family. `--cache full`
// reuses nothing, so it never opens the store.
fps::Editor open_editor(const EditCommandOptions& options, fps::Store& store, bool registering) {
  if (registering || options.cache_mode != "full") store = open_store(options, registering);
  fps::EditorOptions editor;
  editor.bf16 = options.dtype == "bf16";
  editor.device = options.device;
  editor.store = store;  // none: captures in memory, of this run only
  editor.progress = terminal_progress(options.quiet);
  if (!options.model.has_component_options()) return fps::Editor::open(options.model.model, editor);
  fps::ModelOptions model = model_open_options(options.model);
  model.bf16 = editor.bf16;
  model.device = editor.device;
  model.progress = editor.progress;
  return fps::Editor::open(fps::Model::open(options.model.model, model), editor);
}

nlohmann::json stats_json(const fps::EditStats& stats) {
  return {{"width", stats.width},
          {"height", stats.height},
          {"steps_run", stats.steps_run},
          {"mask_ratio", stats.mask_ratio},
          {"mode", fps::cache_mode_name(stats.mode_used)},
          {"cache_hit", stats.cache_hit},
          {"prompt_cache_hit", stats.prompt_cache_hit},  // the prompt's embeddings came from the store
          {"template", stats.template_hash},  // the capture reused; "" on a miss
          {"compute_saving", stats.compute_saving},
          {"blocks_from_cache", stats.blocks_from_cache},
          {"blocks_computed", stats.blocks_computed},
          {"entries_failed", stats.entries_failed},
          {"cache_bytes_loaded", stats.cache_bytes},
          {"seconds", {{"total", stats.total_seconds}, {"encode", stats.encode_seconds},
                       {"denoise", stats.denoise_seconds}, {"decode", stats.decode_seconds}}},
          {"notes", stats.notes}};
}

// write_image picks the format by extension; anything but .png is JPEG.
bool ends_with_png(const std::string& path) {
  if (path.size() < 4) return false;
  std::string extension = path.substr(path.size() - 4);
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return extension == ".png";
}

void print_notes(const fps::EditStats& stats) {
  for (const auto& note : stats.notes) std::cerr << "flashps: note: " << note << "\n";
}

}  // namespace

void add_edit_command(CLI::App& app, CommandAction& action) {
  static EditCommandOptions options;
  CLI::App* edit = app.add_subcommand("edit", "Regenerate the masked region of an image");
  add_shared_options(edit, options, /*mask_required=*/true);
  edit->add_option("--out,-o", options.output, "Output image (.png or .jpg)")->required();
  edit->add_option("--cache", options.cache_mode,
                   "auto (reuse a registered template), full, kv or hidden")
      ->capture_default_str();
  edit->add_option("--grow", options.grow, "Grow the paste-back mask by N pixels (0 to the image's longer side)");
  edit->add_option("--feather", options.feather,
                   "Feather the paste-back mask by N pixels (0 to the image's longer side)");
  edit->add_option("--dilate", options.dilate,
                   "Recompute K extra tokens around the mask (0 to the token grid's longer side)");
  edit->add_option("--texture", options.texture,
                   "Fine detail of the fill copied from the surroundings: on, off, or model (as the model's "
                   "folder recommends)")
      ->check(CLI::IsMember({"model", "on", "off"}))
      ->capture_default_str();
  edit->callback([&action] {
    action = [] {
      // Inputs first: a missing image fails before the model loads.
      const fps::Image image = fps::Image::load(options.image), mask = fps::Image::load(options.mask);
      const fps::EditOptions settings = edit_options(options);
      fps::Store store;
      const fps::Editor editor = open_editor(options, store, /*registering=*/false);
      fps::EditResult result;
      try {
        result = editor.edit(image, mask, settings);
      } catch (const fps::Error& error) {
        rethrow_naming_option(error);
      }
      finish_progress_line(options.quiet);
      result.image.save(options.output);
      print_notes(result.stats);
      if (result.image.channels == 4 && !ends_with_png(options.output))
        std::cerr << "flashps: note: the input's transparency is not in " << options.output
                  << ": JPEG has no alpha channel (write a .png to keep it)\n";
      if (options.json) {
        std::cout << stats_json(result.stats).dump(2) << "\n";
      } else if (!options.quiet) {
        char hit[96] = "";
        if (result.stats.cache_hit)
          std::snprintf(hit, sizeof(hit), ", template cache hit: %.1fx less compute per step",
                        result.stats.compute_saving);
        std::printf("wrote %s (%ux%u, mask %.1f%%, %d step%s, %s%s, %.2f s: denoise %.2f s)\n", options.output.c_str(),
                    result.image.width, result.image.height, 100 * result.stats.mask_ratio, result.stats.steps_run,
                    result.stats.steps_run == 1 ? "" : "s", fps::cache_mode_name(result.stats.mode_used), hit,
                    result.stats.total_seconds, result.stats.denoise_seconds);
      }
      return 0;
    };
  });
}

void add_template_commands(CLI::App& app, CommandAction& action) {
  static EditCommandOptions options;
  CLI::App* templates = app.add_subcommand("template", "Template captures for mask-aware edits");
  templates->require_subcommand(1);
  CLI::App* reg = templates->add_subcommand(
      "register", "Run a template in full and capture its activations for later edits");
  add_shared_options(reg, options, /*mask_required=*/false);
  reg->add_flag("!--no-kv", options.capture_kv, "Do not capture keys/values (what --cache kv replays; needs --mask)");
  reg->add_flag("!--no-hidden", options.capture_hidden, "Do not capture block outputs (what --cache hidden replays; needs --mask)");
  reg->callback([&action] {
    action = [] {
      const fps::Image image = fps::Image::load(options.image);
      std::optional<fps::Image> mask;
      if (!options.mask.empty()) mask = fps::Image::load(options.mask);
      const fps::EditOptions settings = edit_options(options);
      fps::Store store;
      const fps::Editor editor = open_editor(options, store, /*registering=*/true);
      fps::EditStats stats;
      try {
        stats = editor.register_template(image, settings, mask ? &*mask : nullptr, options.capture_kv,
                                         options.capture_hidden);
      } catch (const fps::Error& error) {
        rethrow_naming_option(error);
      }
      finish_progress_line(options.quiet);
      // Skipped (a read-only store): the caller asked for exactly this, so it is an error here.
      if (stats.template_hash.empty())
        throw fps::Error(FLASHPS_IO_ERROR, stats.notes.empty() ? "the template was not registered" : stats.notes.front());
      print_notes(stats);
      // A template has one capture per settings string: the one just written is that template's
      // most recently used (the store lists newest first; registration touches an existing one).
      fps::CaptureInfo capture;
      capture.template_hash = stats.template_hash;
      for (const fps::CaptureInfo& listed : store.list()) {
        if (listed.template_hash != stats.template_hash) continue;
        capture = listed;
        break;
      }
      if (options.json) {
        std::cout << nlohmann::json{{"template", capture.template_hash}, {"config", capture.config},
                                    {"bytes", stats.cache_bytes}, {"seconds", stats.total_seconds}}
                         .dump(2)
                  << "\n";
      } else if (!options.quiet) {
        std::printf("registered template %s (%s): %.1f MB captured in %.2f s\n",
                    capture.template_hash.substr(0, 12).c_str(), capture.config.c_str(), stats.cache_bytes / 1e6,
                    stats.total_seconds);
      }
      return 0;
    };
  });
}

}  // namespace flashps::cli
