// `flashps batch` (a manifest through the serving engine) and `flashps profile` (fit this
// machine's latency models); the logic is in sdk/src/serve.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cache/activation_store.h"
#include "commands.h"
#include "core/error.h"
#include "core/json_file.h"
#include "model_choice.h"
#include "pipeline/flux_inpaint_pipeline.h"
#include "pipeline/sd_inpaint_pipeline.h"
#include "serve/batch_runner.h"
#include "serve/device_profiler.h"
#include "serve/device_selection.h"
#include "serve/flux_device.h"
#include "serve/sd_device.h"
#include "terminal_progress.h"

namespace flashps::cli {
namespace {

struct ServeCommandOptions {
  std::string manifest, model, dtype = "fp32", cache_dir, profile, batching = "cb", json_out, devices = "cpu";
  int max_batch = 8;
  size_t max_queued = 64;
  bool no_resume = false, quiet = false;
};

// The model as engine devices, one worker per listed device: a Flux folder (the bundled default)
// or a Stable Diffusion one (CPU only).
std::vector<serve::EngineDevice> open_devices(const ServeCommandOptions& options, bool& takes_text) {
  const ModelChoice model = choose_model(options.model);
  cache::ActivationStoreOptions store_options;
  store_options.directory = options.cache_dir.empty() ? cache::default_store_directory() : options.cache_dir;
  auto store = cache::ActivationStore::open(store_options);
  const at::ScalarType dtype = options.dtype == "bf16" ? at::kBFloat16 : at::kFloat;
  takes_text = is_stable_diffusion_folder(model.dir);
  const std::vector<at::Device> devices = serve::select_devices(options.devices);
  if (takes_text) {
    if (devices.size() != 1 || !devices.front().is_cpu())
      throw Error(model.dir + ": Stable Diffusion models are served on the CPU only (--devices cpu)");
    return {serve::sd_engine_device(std::shared_ptr<SDInpaintPipeline>(SDInpaintPipeline::load(model.dir, dtype, store)),
                                    options.profile)};
  }
  return serve::flux_engine_devices(model.dir, dtype, store, devices, options.profile);
}

}  // namespace

void add_serve_commands(CLI::App& app, CommandAction& action) {
  static ServeCommandOptions options;
  CLI::App* batch = app.add_subcommand(
      "batch", "Run a JSON Lines manifest of edits through the serving engine (resumable)");
  batch->add_option("manifest", options.manifest,
                    "JSON Lines: {\"image\", \"mask\", \"output\", \"seed\", \"steps\", \"strength\", "
                    "\"prompt_embeds\", \"cache\"} per line")
      ->required();
  batch->add_option("--model", options.model, "Model folder (diffusers layout); default: bundled model");
  batch->add_option("--dtype", options.dtype, "Transformer precision: fp32 or bf16")
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->capture_default_str();
  batch->add_option("--cache-dir", options.cache_dir, "Activation store directory");
  batch->add_option("--batching", options.batching, "static-full, static, naive-cb or cb")->capture_default_str();
  batch->add_option("--max-batch", options.max_batch, "Requests denoised together")->capture_default_str();
  batch->add_option("--max-queued", options.max_queued, "Requests waiting at most")->capture_default_str();
  batch->add_option("--profile", options.profile, "Device profile from `flashps profile` (for routing)");
  batch->add_option("--devices", options.devices,
                    "Workers, one per device: cpu, cuda (every GPU), cuda:N, a comma-separated list, or auto "
                    "(every GPU, else the CPU)")
      ->capture_default_str();
  batch->add_flag("--no-resume", options.no_resume, "Redo items whose output already exists");
  batch->add_option("--json", options.json_out, "Write the per-item results as JSON to this file");
  batch->add_flag("--quiet,-q", options.quiet, "No progress bar");
  batch->callback([&action] {
    action = [] {
      const serve::BatchManifest manifest = serve::read_batch_manifest(options.manifest);
      bool takes_text = false;
      std::vector<serve::EngineDevice> devices = open_devices(options, takes_text);
      serve::EngineOptions engine_options;
      engine_options.batching = serve::batching_config(options.batching, options.max_batch);
      engine_options.max_queued = options.max_queued;
      serve::Engine engine(std::move(devices), engine_options);
      serve::BatchRunOptions run;
      run.model_takes_text = takes_text;
      run.resume = !options.no_resume;
      run.max_in_flight = options.max_queued;
      const ProgressCallback bar = terminal_progress(options.quiet);
      run.progress = [&bar](const serve::BatchProgress& progress) {
        const int resolved = progress.done + progress.failed + progress.skipped;
        return !bar || bar({"batch", resolved, progress.total, progress.seconds});
      };
      const serve::BatchSummary summary = serve::run_batch(engine, manifest, run);
      finish_progress_line(options.quiet);
      for (const serve::BatchItemOutcome& item : summary.items)
        if (item.status == "failed") std::cerr << "flashps: failed: " << item.error << "\n";
      for (const std::string& note : summary.notes) std::cerr << "flashps: note: " << note << "\n";
      std::printf("batch %s: %d done, %d skipped (already written), %d failed, %d cancelled; %d template cache hits; "
                  "%.1f s, %.2f edits/s\n",
                  options.manifest.c_str(), summary.done, summary.skipped, summary.failed, summary.cancelled,
                  summary.cache_hits, summary.seconds, summary.throughput);
      if (!options.json_out.empty()) {
        nlohmann::json items = nlohmann::json::array();
        for (const serve::BatchItemOutcome& item : summary.items)
          items.push_back({{"line", item.line}, {"output", item.output}, {"status", item.status},
                           {"error", item.error}, {"cache_hit", item.cache_hit}, {"seconds", item.seconds}});
        write_json_file(options.json_out, {{"done", summary.done}, {"skipped", summary.skipped},
                                           {"failed", summary.failed}, {"cancelled", summary.cancelled},
                                           {"cache_hits", summary.cache_hits}, {"seconds", summary.seconds},
                                           {"throughput", summary.throughput}, {"items", items}});
      }
      return summary.failed > 0 ? 2 : summary.cancelled > 0 ? 130 : 0;
    };
  });
}

void add_profile_command(CLI::App& app, CommandAction& action) {
  static ServeCommandOptions options;
  static std::string out = "flashps-profile.json";
  static int repeats = 2;
  CLI::App* profile = app.add_subcommand(
      "profile", "Measure this machine with a model and fit the scheduler's latency models (with R²)");
  profile->add_option("--model", options.model, "Model folder (diffusers layout); default: bundled model");
  profile->add_option("--dtype", options.dtype, "Transformer precision: fp32 or bf16")
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->capture_default_str();
  profile->add_option("--out,-o", out, "Profile JSON to write")->capture_default_str();
  profile->add_option("--repeats", repeats, "Timings per point (the fastest is kept)")->capture_default_str();
  profile->add_flag("--quiet,-q", options.quiet, "No progress bar");
  profile->callback([&action] {
    action = [] {
      // A scratch in-memory store: profiling must not fill the user's activation store.
      const ModelChoice model = choose_model(options.model);
      auto pipeline = FluxInpaintPipeline::load(model.dir, options.dtype == "bf16" ? at::kBFloat16 : at::kFloat);
      serve::ProfileOptions profile_options;
      profile_options.repeats = repeats;
      profile_options.progress = terminal_progress(options.quiet);
      const serve::ProfileReport report = serve::profile_flux_device(*pipeline, profile_options);
      finish_progress_line(options.quiet);
      serve::write_device_profile(report.profile, out);
      const serve::DeviceProfile& fitted = report.profile;
      std::printf("compute: %.3g s/GFLOP per block + %.3g ms per block (R² %.4f, %d batched steps)\n",
                  fitted.block_compute.slope * 1e9, fitted.block_compute.intercept * 1e3, fitted.block_compute.r2,
                  fitted.block_compute.samples);
      std::printf("loading: %.2f GB/s + %.3g ms per read (R² %.4f, %d reads)\n",
                  fitted.block_load.slope > 0 ? 1e-9 / fitted.block_load.slope : 0.0, fitted.block_load.intercept * 1e3,
                  fitted.block_load.r2, fitted.block_load.samples);
      std::printf("pre-processing %.1f ms, post-processing %.1f ms per request\nwrote %s\n",
                  fitted.preprocess_seconds * 1e3, fitted.postprocess_seconds * 1e3, out.c_str());
      return 0;
    };
  });
}

}  // namespace flashps::cli
