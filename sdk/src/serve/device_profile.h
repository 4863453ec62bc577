// A device's latency models (FlashPS §4.4): the seconds one transformer block takes as a linear
// function of the FLOPs it computes for a batch, and the seconds its cached activations take to
// load as a linear function of their bytes; plus per-request pre-/post-processing times and the
// model's per-block work. `flashps profile` fits one for the current machine; the paper's
// H800-class constants are built in for simulating GPU clusters.
#pragma once
#include <string>
#include <vector>

#include "engine/capture.h"
#include "engine/cost_model.h"
#include "serve/linear_fit.h"
#include "engine/request_work.h"

namespace flashps::serve {

using engine::RequestWork;

// One batched denoising step as `flashps profile` timed it: what ran and every measured time.
// The simulator's measured ground truth replays these (serve_tools/step_ground_truth.h); the
// fits below are the scheduler's model of them.
struct MeasuredStep {
  std::vector<RequestWork> batch;
  int cached_blocks = 0, computed_blocks = 0;  // blocks that replayed the capture / computed every token
  double flops = 0;                            // as computed (a count from the blocks' work, not a time)
  double load_bytes = 0;                       // cached activations the step read
  std::vector<double> seconds;                 // every repeat, in the order measured
  // The same step timed again while DeviceProfile::co_runners other workers of this host stepped
  // the same kind of batch beside it (shared cores' caches and memory bandwidth); empty when not
  // measured.
  std::vector<double> co_run_seconds;
};

// The middle value (the mean of the two middle ones for an even count); 0 for none.
double median_of(std::vector<double> values);
// Median time with the co-runners beside it over median time alone (1 where not measured).
double co_run_slowdown(const MeasuredStep& step);

struct DeviceProfile {
  std::string name;
  std::vector<engine::BlockWork> blocks;  // the model's blocks in execution order
  engine::CacheMode cache_mode = engine::CacheMode::kv;
  LinearFit block_compute;  // seconds of one block vs its FLOPs for the whole batch
  LinearFit block_load;     // seconds of one block's cache load vs its bytes
  double step_fixed_seconds = 0;     // per step outside the blocks (embedders, scheduler, batching)
  double preprocess_seconds = 0;     // per request: decode, prepare, VAE encode
  double postprocess_seconds = 0;    // per request: VAE decode, paste back, encode
  // The workload this profile was measured on, for simulated requests.
  int64_t image_tokens = 4096, text_tokens = 512;
  int steps = 28;
  std::vector<MeasuredStep> measured_steps;  // empty for built-in profiles and older files
  int co_runners = 0;  // workers beside the timed one in measured_steps' co_run_seconds (0: none)
};

struct StepEstimate {
  double seconds = 0;  // pipeline latency of one denoising step of the batch
  double flops = 0;    // FLOPs as computed
  double load_bytes = 0;
};

// One step of a batch, with Algorithm 1's plan over the batch's block times (the paper's O(N)
// greedy: the scheduler calls this for every worker at every arrival; kv replays cannot skip
// loads, so a kv profile caches every block when any request replays).
StepEstimate estimate_step(const DeviceProfile& profile, const std::vector<RequestWork>& batch);

// Constants of a Flux.1-dev-class model at 1024x1024 (57 blocks, dim 3072, bf16, kv cache) on an
// H800-class GPU: ~400 TFLOP/s effective plus 0.25 ms of fixed cost per block (kernel launches
// and under-filled SMs: what makes batching pay), ~50 GB/s pinned host-to-device loading
// (PCIe 5 x16), and the paper's ~0.3-0.36 s of CPU work per pre-/post-processing (§6.4).
DeviceProfile h800_flux_profile();

// The planner's speed model (engine/cost_model.h) from a profile's fits.
engine::DeviceSpeed device_speed_of(const DeviceProfile& profile);

// Where `flashps profile` writes by default and edits look: $XDG_CACHE_HOME/flashps/
// device-profile.json, else ~/.cache/flashps/device-profile.json.
std::string default_profile_path();
// The profile a device uses: `given` when set; else $FLASHPS_PROFILE ("none": no profile); else
// the default location when a file is there; empty: none (the pipeline estimates online).
std::string resolve_profile_path(const std::string& given);

// JSON round trip (`flashps profile --out`); errors name the file.
void write_device_profile(const DeviceProfile& profile, const std::string& path);
DeviceProfile read_device_profile(const std::string& path);

}  // namespace flashps::serve
