// `flashps profile`: measures this machine with a model of any family and fits the latency models the
// scheduler and the simulator use (serve/device_profile.h), reporting R² of each fit.
//   compute: batched denoising steps of full-compute and replaying edits (the family's cache
//            mode: kv for Flux, hidden for Stable Diffusion) at several sizes, batch
//            sizes and mask ratios; step seconds fitted on the FLOPs of the step;
//   loading: reads of cached rows from the pipeline's store, seconds fitted on bytes;
//   pre-/post-processing: mean seconds of start_edit / finish_edit;
//   co-running (with co_runners): each batch timed again while other workers of this host step
//            batches like it on their own threads, as workers sharing a machine do.
#pragma once
#include <vector>

#include "core/diagnostics/progress.h"
#include "pipeline/inpaint_model.h"
#include "serve/device_profile.h"

namespace flashps::serve {

struct ProfileOptions {
  std::vector<int> sizes = {64, 128, 256, 384, 512};  // pixels per side (512: the default edit size)
  std::vector<int> batch_sizes = {1, 2, 4};
  std::vector<double> mask_ratios = {0.1, 0.3, 0.6};
  int repeats = 2;  // timings per batch: the fit takes the fastest, measured_steps keeps them all
  // Pipelines of the same model for workers beside the timed one (none: no co-run timings).
  std::vector<InpaintPipeline*> co_runners;
  ProgressCallback progress;
};

struct ProfileSample {
  double x = 0;  // FLOPs or bytes
  double seconds = 0;
};

struct ProfileReport {
  DeviceProfile profile;
  std::vector<ProfileSample> compute_samples, load_samples;
};

ProfileReport profile_device(InpaintPipeline& pipeline, const ProfileOptions& options);

}  // namespace flashps::serve
