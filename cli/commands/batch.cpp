// `flashps batch`: a JSON Lines manifest of edits through the serving engine (resumable).
#include <flashps/flashps.hpp>

#include <csignal>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <string>
#include <vector>

#include "commands.h"
#include "interrupt_signals.h"
#include "model_options.h"
#include "serving_engine.h"
#include "terminal_progress.h"

namespace flashps::cli {
namespace {

namespace fps = flashps::sdk;

struct BatchCommandOptions {
  std::string manifest, dtype = "fp32", cache_dir, profile, batching = "cb", json_out, devices = "cpu";
  ModelPathOptions model;
  int max_batch = 0;
  size_t max_queued = 64;
  bool no_resume = false, quiet = false;
};

}  // namespace

void add_batch_command(CLI::App& app, CommandAction& action) {
  static BatchCommandOptions options;
  CLI::App* batch = app.add_subcommand(
      "batch", "Run a JSON Lines manifest of edits through the serving engine (resumable)");
  batch->add_option("manifest", options.manifest,
                    "JSON Lines: {\"image\", \"mask\", \"output\", \"seed\", \"steps\", \"strength\", \"prompt\", "
                    "\"prompt_embeds\", \"cache\"} per line")
      ->required();
  add_model_options(batch, options.model);
  batch->add_option("--dtype", options.dtype, "Transformer precision: fp32 or bf16")
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->capture_default_str();
  batch->add_option("--cache-dir", options.cache_dir, "Activation store directory");
  batch->add_option("--batching", options.batching, "static-full, static, naive-cb or cb")->capture_default_str();
  batch->add_option("--max-batch", options.max_batch,
                    "Requests denoised together; 0: per device (1 where its profile measured that batching saves "
                    "no time, else 8)")
      ->check(CLI::Range(0, FLASHPS_MAX_BATCH))
      ->capture_default_str();
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
      fps::validate_batch(options.manifest);  // a malformed manifest fails before the model loads
      const fps::Engine engine =
          open_serving_engine({options.model, options.devices, options.dtype, options.cache_dir, options.batching,
                               options.profile, options.max_batch, options.max_queued, options.quiet})
              .engine;

      fps::BatchOptions run;
      run.resume = !options.no_resume;
      run.max_in_flight = options.max_queued;
      run.json_report_path = options.json_out;
      // Ctrl+C / SIGTERM: the SDK cancels when the progress callback says so, at the next step.
      InterruptSignals interrupts;
      const fps::ProgressFunction bar = terminal_progress(options.quiet);
      run.progress = [&bar](const std::string& stage, int step, int total, double seconds) {
        if (bar) bar(stage, step, total, seconds);
        return InterruptSignals::requested_signal() == 0;
      };
      // Failures are printed after the progress line ends, in the order they were reported.
      std::mutex failures_mutex;
      std::vector<std::string> failures;
      run.on_failure = [&](int, const std::string&, const std::string& error) {
        std::lock_guard<std::mutex> lock(failures_mutex);
        failures.push_back(error);
      };
      fps::BatchSummary summary;
      try {
        summary = engine.run_batch(options.manifest, run);
      } catch (const fps::BatchCancelled& cancelled) {
        summary = cancelled.summary();  // reported below like a finished batch
      }
      finish_progress_line(options.quiet);
      for (const std::string& error : failures) std::cerr << "flashps: failed: " << error << "\n";
      for (const std::string& note : summary.notes) std::cerr << "flashps: note: " << note << "\n";
      std::printf("batch %s: %d done, %d skipped (already written), %d failed, %d cancelled; %d template cache hits; "
                  "%.1f s, %.2f edits/s\n",
                  options.manifest.c_str(), summary.done, summary.skipped, summary.failed, summary.cancelled,
                  summary.cache_hits, summary.seconds, summary.throughput);
      if (const int signal = InterruptSignals::requested_signal()) {
        std::cerr << "flashps: " << (signal == SIGTERM ? "terminated" : "interrupted") << ": " << summary.cancelled
                  << " edits cancelled; finished outputs are kept, run the same command again to do the rest\n";
        return 128 + signal;
      }
      return summary.failed > 0 ? 2 : summary.cancelled > 0 ? 130 : 0;
    };
  });
}

}  // namespace flashps::cli
