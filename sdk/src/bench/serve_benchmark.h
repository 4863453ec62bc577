// `flashps bench serve`: serving configurations compared side by side in one run, on the same
// request stream (arrivals from a Poisson or Gamma process, mask ratios from the editing traces):
//   batching  static-full (diffusers-style: static batches, everything computed, pre/post inline),
//             static (mask-aware, static batches), naive-cb (continuous, pre/post inline),
//             cb (continuous, disaggregated pre/post);
//   policy    round-robin, request-count, token-count, mask-aware (compared under cb).
// With simulate > 0 the requests run on that many simulated devices (a latency profile: the
// paper-class H800 constants or a file from `flashps profile`), under each of several ground
// truths (serve_tools/step_ground_truth.h) while the balancer keeps routing with the profile's
// model; otherwise on real CPU workers with a model (default: the bundled one), whose templates
// are registered first.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/diagnostics/progress.h"

namespace flashps::bench {

struct ServeBenchmarkOptions {
  int simulate = 0;                 // simulated devices; 0 = real CPU workers
  std::string profile = "h800";     // simulated: "h800" or a profile JSON file
  // Simulated: ground truths by name (exact, noisy, measured); empty: exact, noisy, measured
  // (when the profile has measured steps), and the most realistic of those with a systematic
  // error of +model_error and -model_error (skewed: see step_ground_truth.h).
  std::vector<std::string> ground_truths;
  double model_error = 0.2;
  double noise_cv = 0.1;
  std::string trace = "public";     // serve::MaskRatioSource::named (the paper's public trace)
  std::string traces_dir;           // default: the shared traces beside the source tree
  std::string arrivals = "poisson";
  double cv = 1.0;
  std::vector<double> rps;          // empty: fractions of the measured capacity (simulated) or a burst (real)
  int requests = 2000;              // per configuration and rate (real: default 24)
  int max_batch = 0;  // 0: per device (serve/batch_size.h)
  double slo_seconds = 0;           // goodput threshold; 0: 5x the unloaded latency
  uint64_t seed = 1;
  // Real workers:
  std::string model_dir;            // default: bundled model
  std::string dtype = "fp32";
  int steps = 8;
  int workers = 1;                  // CPU workers, when `devices` is empty
  std::string devices;              // else one worker per device (serve/device_selection.h)
  std::vector<std::string> images;  // template images (default: samples/images/*)
  // Real workers: also simulate the same requests on as many devices with `profile` (a file),
  // under each ground truth, for real and simulated latencies side by side.
  bool compare_simulated = false;
  ProgressCallback progress;
};

struct ServeRow {
  std::string truth;  // simulated: the ground truth's label; real: "real"
  std::string batching, policy;
  double rps = 0;  // offered load; 0 = all requests at once
  double mean = 0, p50 = 0, p95 = 0, p99 = 0;
  double mean_queueing = 0, p95_queueing = 0;
  double throughput = 0, goodput = 0, slo_attainment = 0;
  int completed = 0;
  // Share of the slowest 5% that are among the largest tenth of requests by work
  // (serve::tail_share_from_largest); negative where the run does not know each request's work.
  double tail_share_from_largest = -1;
};

struct ServeReport {
  nlohmann::json config;
  std::vector<ServeRow> rows;
  nlohmann::json overheads;  // scheduler decision and batch assembly times
  nlohmann::json targets;    // the comparisons the issue asks for, at the highest load (per truth)
  nlohmann::json to_json() const;
  std::string table() const;
};

ServeReport run_serve_benchmark(const ServeBenchmarkOptions& options);

}  // namespace flashps::bench
