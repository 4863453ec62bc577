// `flashps-bench bench edit|quality|photo|store|serve|text` (also run as `flashps bench ...`): the
// mask-aware engine, fill quality vs classical baselines, camera-sized photos, the activation
// store and serving configurations, measured side by side; the logic is in sdk/src/bench.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "bench/edit_benchmark.h"
#include "bench/photo_benchmark.h"
#include "bench/quality_benchmark.h"
#include "bench/sd_edit_benchmark.h"
#include "bench/serve_benchmark.h"
#include "bench/store_benchmark.h"
#include "bench/text_benchmark.h"
#include "bench/http_benchmark.h"
#include "cache/activation_store.h"
#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "developer_commands.h"
#include "workload/mask_ratio_trace.h"

namespace flashps::bench_tool {
namespace {

// Held-out photos: the prepared training photos (tools/train/prepare-photos.sh) when present,
// else the sample photos, which the bundled model was not trained on.
std::vector<std::string> default_quality_photos(int& holdout_every) {
  const char* home = std::getenv("HOME");
  const std::filesystem::path prepared = std::filesystem::path(home ? home : "") / ".cache/flashps/training-photos";
  if (home && std::filesystem::is_directory(prepared)) return {prepared.string()};
  holdout_every = 0;
  return {std::string(FLASHPS_SOURCE_DIR) + "/samples/images"};
}

void add_quality_command(CLI::App& bench, CommandAction& action) {
  static bench::QualityBenchmarkOptions options;
  static std::string model_option, json_path;
  static bool quiet = false;
  CLI::App* quality = bench.add_subcommand(
      "quality", "Masked-region PSNR/SSIM of the model vs mean-colour, pyramid and Telea fills on held-out crops, "
                 "and mask-aware vs full-compute fidelity");
  quality->add_option("--model", model_option, "Model folder (default: the bundled model)");
  quality->add_option("--photos", options.photo_folders,
                      "Photo folders; their held-out split is used (default: prepared training photos, else samples/images)");
  quality->add_option("--holdout-every", options.holdout_every, "Held-out split: 1 photo in N (0 = use all)")
      ->capture_default_str();
  quality->add_option("--traces", options.trace_files, "Mask-ratio CSVs (default: ../shared/traces)");
  quality->add_option("--crops", options.crops, "Crops scored")->capture_default_str();
  quality->add_option("--size", options.crop_size, "Crop side in pixels")->capture_default_str();
  quality->add_option("--steps", options.steps, "Denoising steps")->capture_default_str();
  quality->add_option("--fidelity-crops", options.fidelity_crops, "Crops for the kv/hidden fidelity check")
      ->capture_default_str();
  quality->add_option("--seed", options.seed, "Seed of crops, masks and noise")->capture_default_str();
  quality->add_option("--json", json_path, "Write the results as JSON to this file");
  quality->add_flag("--quiet,-q", quiet, "No progress bar");
  quality->callback([&action] {
    action = [] {
      options.model_dir = model_dir(model_option);
      if (options.photo_folders.empty()) options.photo_folders = default_quality_photos(options.holdout_every);
      if (options.trace_files.empty()) options.trace_files = workload::default_trace_files(FLASHPS_SOURCE_DIR);
      options.progress = terminal_progress(quiet);
      bench::QualityReport report = bench::run_quality_benchmark(options);
      finish_progress_line(quiet);
      std::cout << report.table();
      if (!json_path.empty()) write_json_file(json_path, report.to_json());
      return 0;
    };
  });
}

void add_photo_command(CLI::App& bench, CommandAction& action) {
  static bench::PhotoBenchmarkOptions options;
  static std::string model_option, json_path;
  static bool quiet = false;
  CLI::App* photo = bench.add_subcommand(
      "photo",
      "Camera-sized photos (12 and 24 MP) with a 34% mask: edit seconds and peak RSS, texture transfer on vs off");
  photo->add_option("--model", model_option, "Model folder (default: the bundled model)");
  photo->add_option("--photo", options.photo, "Photo scaled up to each size (default: samples/images/mountains.jpg)");
  photo->add_option("--megapixels", options.megapixels, "Photo sizes in megapixels (4:3)")->capture_default_str();
  photo->add_option("--mask-ratio", options.mask_ratio, "Masked fraction of the photo")->capture_default_str();
  photo->add_option("--steps", options.steps, "Denoising steps (0: the model's recommendation)")->capture_default_str();
  photo->add_option("--seed", options.seed, "Seed of the photo's noise, the mask and the edit")->capture_default_str();
  photo->add_option("--repeats", options.repeats, "Runs per row, texture off and on alternating (fastest reported)")
      ->capture_default_str();
  photo->add_option("--json", json_path, "Write the results as JSON to this file");
  photo->add_flag("--quiet,-q", quiet, "No progress bar");
  photo->callback([&action] {
    action = [] {
      options.model_dir = model_dir(model_option);
      if (options.photo.empty()) options.photo = std::string(FLASHPS_SOURCE_DIR) + "/samples/images/mountains.jpg";
      options.progress = terminal_progress(quiet);
      bench::PhotoReport report = bench::run_photo_benchmark(options);
      finish_progress_line(quiet);
      std::cout << report.table();
      if (!json_path.empty()) write_json_file(json_path, report.to_json());
      return 0;
    };
  });
}

void add_store_command(CLI::App& bench, CommandAction& action) {
  static bench::StoreBenchmarkOptions options;
  static std::string json_path;
  static bool quiet = false;
  CLI::App* store = bench.add_subcommand("store", "Activation store vs plain file I/O: write, cold read, partial reads, host hits");
  store->add_option("--dir", options.directory, "Scratch folder on the disk to measure (default: next to the store)");
  store->add_option("--mb", options.megabytes, "Capture size in MB")->capture_default_str();
  store->add_option("--mask-ratio", options.mask_ratio, "Mask ratio of the partial reads")->capture_default_str();
  store->add_option("--json", json_path, "Write the results as JSON to this file");
  store->add_flag("--quiet,-q", quiet, "No progress bar");
  store->callback([&action] {
    action = [] {
      if (options.directory.empty())
        options.directory = std::filesystem::path(cache::default_store_directory()).parent_path().string();
      options.progress = terminal_progress(quiet);
      bench::StoreBenchmarkReport report = bench::run_store_benchmark(options);
      finish_progress_line(quiet);
      std::cout << report.table();
      if (!json_path.empty()) write_json_file(json_path, report.results);
      return 0;
    };
  });
}

void add_http_command(CLI::App& bench, CommandAction& action) {
  static bench::HttpBenchmarkOptions options;
  static std::string json_path;
  static bool quiet = false;
  CLI::App* http = bench.add_subcommand(
      "http", "flashps serve's HTTP path vs the same edits in-process: requests/s, P50/P95/P99, overhead per request");
  http->add_option("--model", options.model, "Model folder (default: the bundled model)");
  http->add_option("--image", options.image, "Input image (default: a synthetic 512x512 JPEG)");
  http->add_option("--mask", options.mask, "White-on-black mask of the same size (default: a centred square)");
  http->add_option("--requests", options.requests, "Requests per side")->capture_default_str();
  http->add_option("--clients", options.clients, "Concurrent closed-loop clients per side")->capture_default_str();
  http->add_option("--steps", options.steps, "Denoising steps per edit")->capture_default_str();
  http->add_option("--rounds", options.rounds, "Alternating in-process/HTTP rounds")->capture_default_str();
  http->add_option("--compute-nice", options.compute_nice, "Nice value added to the denoising threads (as serve's)")
      ->check(CLI::Range(0, 19))
      ->capture_default_str();
  http->add_option("--json", json_path, "Write the results as JSON to this file");
  http->add_flag("--quiet,-q", quiet, "No progress bar");
  http->callback([&action] {
    action = [] {
      options.progress = terminal_progress(quiet);
      bench::HttpBenchmarkReport report = bench::run_http_benchmark(options);
      finish_progress_line(quiet);
      std::cout << report.table();
      if (!json_path.empty()) write_json_file(json_path, report.results);
      return 0;
    };
  });
}

void add_serve_bench_command(CLI::App& bench, CommandAction& action) {
  static bench::ServeBenchmarkOptions options;
  static std::string model_option, json_path;
  static bool quiet = false;
  CLI::App* serve = bench.add_subcommand(
      "serve", "Serving configurations side by side: static vs continuous batching, inline vs disaggregated "
               "pre/post, load-balancing policies; real CPU workers or --simulate N devices");
  serve->add_option("--simulate", options.simulate, "Simulated devices (0: real CPU workers with the model)")
      ->capture_default_str();
  serve->add_option("--profile", options.profile, "Simulated device profile: h800 or a file from `flashps profile` (real workers route with a file)")
      ->capture_default_str();
  serve->add_option("--ground-truth", options.ground_truths,
                    "Simulated: what steps really take, while the balancer routes with the profile's model: exact, "
                    "noisy, measured (replays the profile's recorded steps); default: all of them, plus the most "
                    "realistic with +/- --model-error")
      ->check(CLI::IsMember({"exact", "noisy", "measured"}))
      ->delimiter(',');
  serve->add_option("--model-error", options.model_error,
                    "Simulated: systematic error of the ground truth against the balancer's model, as a fraction "
                    "(per-FLOP cost x(1+e), fixed cost x(1-e)); run at +e and -e; 0: none")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.89));
  serve->add_option("--noise-cv", options.noise_cv, "Simulated, noisy ground truth: per-step spread")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 4.0));
  serve->add_option("--trace", options.trace,
                    "Mask ratios: production, public, public-inpaint, public-adetailer, all, or a CSV file")
      ->capture_default_str();
  serve->add_option("--traces-dir", options.traces_dir, "Folder of the trace CSVs (default: ../shared/traces)");
  serve->add_option("--arrivals", options.arrivals, "poisson or gamma")->capture_default_str();
  serve->add_option("--cv", options.cv, "Gamma arrivals: coefficient of variation")->capture_default_str();
  serve->add_option("--rps", options.rps,
                    "Offered loads in requests/s (default: 0.15, 0.3, 0.6, 0.9 of capacity simulated; all at once real)");
  auto* requests = serve->add_option("--requests", options.requests, "Requests per configuration and load (default 2000 simulated, 24 real)");
  serve->add_option("--max-batch", options.max_batch,
                    "Maximum batch size; 0: per device (1 where the profile measured that batching saves no time, "
                    "else 8)")
      ->capture_default_str();
  serve->add_option("--slo", options.slo_seconds, "Latency SLO in seconds for goodput (default: 5x unloaded)");
  serve->add_option("--seed", options.seed, "Seed of arrivals and masks")->capture_default_str();
  serve->add_option("--model", model_option, "Real workers: model folder (default: the bundled model)");
  serve->add_option("--dtype", options.dtype, "Real workers: fp32 or bf16")->check(CLI::IsMember({"fp32", "bf16"}));
  serve->add_option("--steps", options.steps, "Real workers: denoising steps")->capture_default_str();
  serve->add_option("--workers", options.workers, "Real workers: CPU workers")->capture_default_str();
  serve->add_option("--devices", options.devices,
                    "Real workers: one per device instead (cpu, cuda, cuda:N, a comma-separated list, or auto)");
  serve->add_option("--images", options.images, "Real workers: template images (default: samples/images)");
  serve->add_flag("--compare-simulated", options.compare_simulated,
                  "Real workers: also simulate the same requests on as many devices with --profile FILE, under "
                  "each ground truth, side by side with the real latencies");
  serve->add_option("--json", json_path, "Write {\"rows\": [...]} as JSON to this file");
  serve->add_flag("--quiet,-q", quiet, "No progress bar");
  serve->callback([&action, requests] {
    action = [requests] {
      if (options.traces_dir.empty()) options.traces_dir = workload::default_traces_directory(FLASHPS_SOURCE_DIR);
      if (options.simulate <= 0) {
        if (requests->count() == 0) options.requests = 24;
        options.model_dir = model_dir(model_option);
        if (options.images.empty())
          for (const auto& entry : std::filesystem::directory_iterator(std::string(FLASHPS_SOURCE_DIR) + "/samples/images"))
            options.images.push_back(entry.path().string());
        std::sort(options.images.begin(), options.images.end());
      }
      options.progress = terminal_progress(quiet);
      bench::ServeReport report = bench::run_serve_benchmark(options);
      finish_progress_line(quiet);
      std::cout << report.table();
      if (!json_path.empty()) write_json_file(json_path, report.to_json());
      return 0;
    };
  });
}

void add_text_command(CLI::App& bench, CommandAction& action) {
  static bench::TextBenchmarkOptions options;
  static std::string json_path;
  static bool quiet = false;
  CLI::App* text = bench.add_subcommand(
      "text", "T5 text encoder (Flux's text_encoder_2) at base and XXL shapes vs this machine's GEMM rate; peak memory");
  text->add_option("--shapes", options.shapes, "base and/or xxl")->check(CLI::IsMember({"base", "xxl"}));
  text->add_option("--dtypes", options.dtypes, "bf16 and/or fp32")->check(CLI::IsMember({"bf16", "fp32"}));
  text->add_option("--tokens", options.tokens, "Prompt tokens (max_sequence_length)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  text->add_option("--repeats", options.repeats, "Timed encodes per row (fastest reported)")->capture_default_str();
  text->add_option("--load-dir", options.scratch_dir,
                   "Also save each model as a sharded checkpoint in this scratch folder and time loading it");
  text->add_option("--checkpoint-dtype", options.checkpoint_dtype, "Dtype of that checkpoint: fp32 or bf16")
      ->check(CLI::IsMember({"bf16", "fp32"}))
      ->capture_default_str();
  text->add_option("--json", json_path, "Write the results as JSON to this file");
  text->add_flag("--quiet,-q", quiet, "No progress bar");
  text->callback([&action] {
    action = [] {
      options.progress = terminal_progress(quiet);
      bench::TextBenchmarkReport report = bench::run_text_benchmark(options);
      finish_progress_line(quiet);
      std::cout << report.table();
      if (!json_path.empty()) write_json_file(json_path, report.results);
      return 0;
    };
  });
}

}  // namespace

void add_bench_commands(CLI::App& app, CommandAction& action) {
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks (timings measured side by side in one run)");
  bench->require_subcommand(1);
  static bench::EditBenchmarkOptions options;
  static std::string json_path;
  static bool quiet = false;
  options.model = bench::reference_bench_config();
  static std::string family = "flux", flux_config = "bench";
  static bench::SDEditBenchmarkOptions sd_options;
  CLI::App* edit = bench->add_subcommand(
      "edit", "Full vs mask-aware editing on a random-weight model: a Flux transformer (kv, hidden) or an SD UNet (hidden)");
  edit->add_option("--family", family, "flux, or sd (a UNet at a real Stable Diffusion size)")
      ->check(CLI::IsMember({"flux", "sd"}))
      ->capture_default_str();
  edit->add_option("--unet-config", sd_options.config, "sd: sd2-inpaint (865M) or sd15-inpaint (860M)")
      ->check(CLI::IsMember({"sd2-inpaint", "sd15-inpaint"}))
      ->capture_default_str();
  edit->add_option("--unet-dir", sd_options.unet_dir,
                   "sd: a diffusers UNet folder to run instead of the random-weight --unet-config (fidelity on real weights)")
      ->check(CLI::ExistingDirectory);
  edit->add_option("--photos", sd_options.photos_dir, "sd: photos for the VAE's bf16 accuracy check")->capture_default_str();
  edit->add_option("--size", sd_options.size, "sd: image pixels per side (multiple of 64)")->capture_default_str();
  edit->add_flag("!--no-vae", sd_options.time_vae, "sd: do not time the VAE");
  edit->add_flag("!--no-planner", sd_options.use_planner, "sd: take every block from the cache");
  edit->add_option("--config", flux_config,
                   "flux: bench (the reference config diffusers was timed with) or flux1 (FLUX.1 Fill's size: "
                   "19 + 38 blocks, hidden 3072; grid 64, 512 text tokens, bf16 unless given; a GPU's job)")
      ->check(CLI::IsMember({"bench", "flux1"}))
      ->capture_default_str();
  edit->add_option("--device", options.device, "flux: cpu or cuda:N")->capture_default_str();
  edit->add_option("--steps", options.steps, "Denoising steps")->capture_default_str();
  edit->add_option("--grid", options.grid, "Image token grid side (tokens = grid^2)")->capture_default_str();
  edit->add_option("--text-tokens", options.text_tokens, "Text tokens")->capture_default_str();
  edit->add_option("--ratios", options.mask_ratios, "Mask ratios");
  edit->add_option("--dtypes", options.dtypes, "fp32 and/or bf16")->check(CLI::IsMember({"fp32", "bf16"}));
  edit->add_option("--repeats", options.repeats, "Timed runs per row (fastest reported)")->capture_default_str();
  edit->add_option("--double-blocks", options.model.num_layers, "Double-stream blocks")->capture_default_str();
  edit->add_option("--single-blocks", options.model.num_single_layers, "Single-stream blocks")->capture_default_str();
  edit->add_flag("--phase-profile", options.phase_profile,
                 "flux: run every row once more with the phase profiler and print where each step's time goes; "
                 "sd: profile the VAE decode (convolution FLOP/s against the kernels alone)");
  edit->add_option("--json", json_path, "Write the results as JSON to this file");
  edit->add_flag("--quiet,-q", quiet, "No progress bar");
  edit->callback([&action, edit] {
    action = [edit] {
      options.progress = terminal_progress(quiet);
      if (family == "sd") {
        // Shared options override the SD defaults only when given (Flux's defaults differ).
        if (edit->count("--steps")) sd_options.steps = options.steps;
        if (edit->count("--ratios")) sd_options.mask_ratios = options.mask_ratios;
        if (edit->count("--dtypes")) sd_options.dtypes = options.dtypes;
        sd_options.phase_profile = options.phase_profile;
        sd_options.progress = options.progress;
        bench::SDEditBenchmarkReport report = bench::run_sd_edit_benchmark(sd_options);
        finish_progress_line(quiet);
        std::cout << report.table();
        std::cout << report.extra.dump(2) << "\n";
        if (!json_path.empty()) write_json_file(json_path, report.to_json());
        return 0;
      }
      if (flux_config == "flux1") {
        const int double_blocks = options.model.num_layers, single_blocks = options.model.num_single_layers;
        options.model = bench::flux1_size_config();
        if (edit->count("--double-blocks")) options.model.num_layers = double_blocks;
        if (edit->count("--single-blocks")) options.model.num_single_layers = single_blocks;
        if (!edit->count("--grid")) options.grid = 64;
        if (!edit->count("--text-tokens")) options.text_tokens = 512;
        if (!edit->count("--dtypes")) options.dtypes = {"bf16"};
      }
      bench::EditBenchmarkReport report = bench::run_edit_benchmark(options);
      finish_progress_line(quiet);
      std::cout << report.table() << report.phase_table();
      std::cout << report.extra.dump(2) << "\n";
      if (!json_path.empty()) write_json_file(json_path, report.to_json());
      return 0;
    };
  });
  add_quality_command(*bench, action);
  add_photo_command(*bench, action);
  add_store_command(*bench, action);
  add_http_command(*bench, action);
  add_serve_bench_command(*bench, action);
  add_text_command(*bench, action);
  add_quant_linear_command(*bench, action);
}

}  // namespace flashps::bench_tool
