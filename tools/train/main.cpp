// flashps-train: trains a small Flux Fill model on photos with random masks (thin front end over
// sdk/src/training). Resumable: run it again with the same --out and --seed to continue.
#include <CLI/CLI.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>

#include "core/diagnostics/error.h"
#include "core/runtime/runtime.h"
#include "training/fill_trainer.h"
#include "workload/mask_ratio_trace.h"

namespace {
volatile std::sig_atomic_t interrupted = 0;
void on_interrupt(int) { interrupted = 1; }
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"flashps-train: train the small Flux Fill model on photos (resumable)"};
  flashps::training::FillTrainerOptions options;
  int threads = 0;
  double max_minutes = 0;
  int64_t stop_at_step = 0;
  bool no_resume = false;
  app.add_option("--photos", options.photo_folders, "folders of training photos (repeatable)")->required();
  app.add_option("--out", options.output_dir, "output folder (checkpoint/ and model/)")->required();
  app.add_option("--traces", options.trace_files, "mask-ratio CSVs (default: ../shared/traces/*.csv)");
  app.add_option("--steps", options.steps, "total optimiser steps (a resumed run continues up to this)");
  app.add_option("--tokens-per-batch", options.tokens_per_batch, "image tokens per step");
  app.add_option("--crop-sizes", options.crop_sizes, "crop sizes in pixels, drawn uniformly per step");
  app.add_option("--loss", options.loss_target, "velocity (weighs low noise up to 25x) or sample (x0, every noise level alike)")
      ->check(CLI::IsMember({"velocity", "sample"}));
  app.add_option("--edge-loss", options.edge_loss_weight, "weight of the pixel-gradient loss on the predicted x0 (needs --loss sample)");
  app.add_option("--detail-loss", options.detail_loss_weight,
                 "weight of the texture loss: the masked tokens' local detail must match the photo's (needs --loss sample)");
  app.add_option("--channel-balance", options.channel_balance,
                 "exponent a of the per-latent-value loss weights var^-a (1: loss in whitened latents; needs --loss sample)")
      ->check(CLI::Range(0.0, 2.0));
  app.add_option("--masked-image-fill", options.spec.masked_image_fill,
                 "what the conditioning image holds under the mask: neutral (mid-grey, as FLUX.1-Fill) or pyramid "
                 "(a smooth fill from the surroundings; recorded in the exported model_index.json)")
      ->check(CLI::IsMember({"neutral", "pyramid"}));
  app.add_option("--init-from", options.init_from, "start from this model folder's weights (fine-tuning; ignored when resuming)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--lr", options.learning_rate, "peak learning rate");
  app.add_option("--checkpoint-every", options.checkpoint_every, "steps between checkpoints");
  app.add_option("--seed", options.seed, "seed of initialisation and data order");
  app.add_option("--stop-at-step", stop_at_step,
                 "stop (with a checkpoint and export) after this step, keeping the learning-rate schedule of --steps");
  app.add_option("--max-minutes", max_minutes, "stop (with a checkpoint) after this much wall time");
  app.add_option("--threads", threads, "CPU threads (default: all cores)");
  app.add_flag("--no-resume", no_resume, "start over even if a checkpoint exists");
  CLI11_PARSE(app, argc, argv);
  options.resume = !no_resume;
  if (options.trace_files.empty()) options.trace_files = flashps::workload::default_trace_files(FLASHPS_SOURCE_DIR);

  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  try {
    flashps::RuntimeOptions runtime;
    runtime.num_threads = threads;
    flashps::init_runtime(runtime);
    const auto start = std::chrono::steady_clock::now();
    auto summary = flashps::training::train_fill_model(options, [&](const flashps::training::TrainingProgress& p) {
      const double minutes = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / 60;
      std::printf("step %lld/%lld  loss %.4f  avg %.4f  %.2f s/step  samples %lld  %.1f min\n",
                  static_cast<long long>(p.step), static_cast<long long>(p.total_steps), p.loss, p.average_loss,
                  p.seconds_per_step, static_cast<long long>(p.samples_seen), minutes);
      std::fflush(stdout);
      return !interrupted && (max_minutes <= 0 || minutes < max_minutes) && (stop_at_step <= 0 || p.step < stop_at_step);
    });
    std::printf("trained steps %lld..%lld in %.1f min, average loss %.4f%s; model: %s\n",
                static_cast<long long>(summary.first_step), static_cast<long long>(summary.last_step),
                summary.seconds / 60, summary.final_average_loss, summary.stopped_early ? " (stopped early)" : "",
                summary.model_dir.c_str());
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "flashps-train: error: " << error.what() << "\n";
    return 1;
  }
}
