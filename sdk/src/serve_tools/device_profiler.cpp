#include "serve_tools/device_profiler.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>

#include "core/diagnostics/error.h"
#include "core/runtime/thread_clock.h"
#include "serve/engine_device.h"
#include "workload/random_masks.h"

namespace flashps::serve {
namespace {

Image test_image(int size) {  // content does not change timings; a smooth picture
  Image image(size, size, 3);
  for (int y = 0; y < size; ++y)
    for (int x = 0; x < size; ++x) {
      image.at(x, y, 0) = static_cast<uint8_t>(x * 255 / size);
      image.at(x, y, 1) = static_cast<uint8_t>(y * 255 / size);
      image.at(x, y, 2) = static_cast<uint8_t>((x * y) % 251);
    }
  return image;
}

Image mask_image(int size, double ratio, std::mt19937_64& rng) {
  at::Tensor mask = workload::random_mask(size, size, ratio, rng, workload::MaskShape::blob).contiguous();
  Image image(size, size, 1);
  const float* values = mask.data_ptr<float>();
  for (size_t i = 0; i < image.pixels.size(); ++i) image.pixels[i] = values[i] > 0.5f ? 255 : 0;
  return image;
}

// Workers beside the timed one: each steps its own batch like the timed one (same size, mask
// ratio and batch size) in a loop on its own thread until stopped.
class CoRunners {
 public:
  CoRunners(const std::vector<InpaintPipeline*>& pipelines, const std::vector<EditRequest>& requests) {
    for (InpaintPipeline* pipeline : pipelines)
      threads_.emplace_back([this, pipeline, requests] {
        bool started = false;
        try {
          std::vector<std::unique_ptr<EditJob>> jobs;
          std::vector<EditJob*> batch;
          // Long edits, started again whenever they finish: every scheduler takes 50 steps.
          const auto start_batch = [&] {
            jobs.clear();
            batch.clear();
            for (EditRequest request : requests) {
              request.steps = 50;
              jobs.push_back(pipeline->start_edit(request));
              batch.push_back(jobs.back().get());
            }
          };
          start_batch();
          pipeline->step(batch);  // first-step allocations before the timed worker starts
          started = true;
          report(nullptr, true);
          while (!stop_.load()) {
            if (batch.front()->denoised()) start_batch();
            pipeline->step(batch);
          }
        } catch (...) {
          report(std::current_exception(), !started);
        }
      });
    {
      std::unique_lock<std::mutex> lock(mutex_);
      all_started_.wait(lock, [&] { return started_ == int(threads_.size()); });
    }
    try {
      check();
    } catch (...) {
      stop();  // a constructor that throws runs no destructor: join here
      throw;
    }
  }
  ~CoRunners() { stop(); }
  void stop() {
    stop_ = true;
    for (std::thread& thread : threads_)
      if (thread.joinable()) thread.join();
  }
  void check() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failure_) std::rethrow_exception(failure_);
  }

 private:
  // A runner's failure (kept, the first one), and whether it is now started: stepping, or
  // failed before it could.
  void report(std::exception_ptr failure, bool now_started) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failure && !failure_) failure_ = failure;
    if (now_started) ++started_;
    all_started_.notify_one();
  }

  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable all_started_;
  int started_ = 0;  // under mutex_
  std::exception_ptr failure_;
};

}  // namespace

ProfileReport profile_device(InpaintPipeline& pipeline, const ProfileOptions& options) {
  if (options.sizes.empty() || options.batch_sizes.empty()) throw Error("profile: no sizes or batch sizes");
  ProfileReport report;
  DeviceProfile& profile = report.profile;
  profile = estimated_device_profile(pipeline);
  profile.name = "measured by flashps profile (" + std::to_string(at::get_num_threads()) + " threads)";
  DeviceProfile unit = profile;  // FLOPs and bytes of a batch, independent of speed
  const int repeats = std::max(1, options.repeats);
  const bool co_run = !options.co_runners.empty();
  const int steps = (co_run ? 2 * repeats : repeats) + 1;
  profile.co_runners = static_cast<int>(options.co_runners.size());
  std::mt19937_64 rng(1);
  // Pre-/post-processing timed at the largest size only: simulated requests are of that size,
  // and the cost grows with the image (an average over every size underestimated it).
  const int largest_size = *std::max_element(options.sizes.begin(), options.sizes.end());
  double prepare_seconds = 0, finish_seconds = 0;
  int prepared = 0, finished = 0;
  int64_t largest_tokens = 0;  // image token rows of a full edit at the largest size
  // Edits replay the kind the family replays best (Flux: kv, Stable Diffusion: hidden).
  const CacheMode replay = profile.cache_mode;
  const bool capture_kv = replay == CacheMode::kv, capture_hidden = replay == CacheMode::hidden;
  const int total = int(options.sizes.size() * options.batch_sizes.size() * (1 + options.mask_ratios.size()));
  int done = 0;
  for (int size : options.sizes) {
    const Image image = test_image(size);
    EditRequest base;
    base.image = image;
    base.steps = steps;
    base.context_size = -1;  // time the size asked for
    const TemplateInfo info = pipeline.register_template(base, capture_kv, capture_hidden);
    for (InpaintPipeline* co_runner : options.co_runners) co_runner->register_template(base, capture_kv, capture_hidden);

    // Loading: partial reads of one cached entry, as the block loader does. The profiler's store
    // is in memory, so the entry's row count is known from the entry itself.
    const engine::EntryKey first_entry{0, 0, capture_kv ? engine::Slot::keys : engine::Slot::hidden};
    const auto capture = pipeline.store().find({info.template_hash, pipeline.fingerprint(), info.config});
    const at::Tensor resident = capture ? capture->resident_entry(first_entry) : at::Tensor();
    if (resident.defined()) {
      const int64_t rows = resident.size(0);
      for (double fraction : {0.25, 0.5, 0.9}) {
        const int64_t count = std::max<int64_t>(1, int64_t(fraction * rows));
        at::Tensor picked = at::arange(count, at::kLong) * (rows / count);
        double best = 1e9;
        at::Tensor read;
        for (int r = 0; r < repeats + 1; ++r) {
          const auto start = std::chrono::steady_clock::now();
          read = capture->read_rows(first_entry, picked);
          best = std::min(best, seconds_since(start));
        }
        report.load_samples.push_back({double(read.numel() * read.element_size()), best});
      }
    }

    std::vector<double> ratios{1.0};
    ratios.insert(ratios.end(), options.mask_ratios.begin(), options.mask_ratios.end());
    for (int batch_size : options.batch_sizes) {
      for (double ratio : ratios) {
        std::vector<std::unique_ptr<EditJob>> jobs;
        std::vector<EditJob*> batch;
        std::vector<RequestWork> works;
        std::vector<EditRequest> requests;
        for (int b = 0; b < batch_size; ++b) {
          EditRequest request = base;
          request.seed = static_cast<uint64_t>(b);
          request.mask = mask_image(size, ratio, rng);
          request.mode = ratio >= 1.0 ? CacheMode::full : replay;
          requests.push_back(request);
          const auto start = std::chrono::steady_clock::now();
          jobs.push_back(pipeline.start_edit(request));
          if (size == largest_size && ratio >= 1.0) largest_tokens = jobs.back()->image_tokens();
          if (size == largest_size) {
            prepare_seconds += seconds_since(start);
            ++prepared;
          }
          batch.push_back(jobs.back().get());
          works.push_back(jobs.back()->work());
        }
        MeasuredStep measured;
        measured.batch = works;
        for (int r = 0; r < repeats; ++r) {
          const auto start = std::chrono::steady_clock::now();
          pipeline.step(batch);
          measured.seconds.push_back(seconds_since(start));
        }
        if (co_run) {
          CoRunners beside(options.co_runners, requests);
          for (int r = 0; r < repeats; ++r) {
            const auto start = std::chrono::steady_clock::now();
            pipeline.step(batch);
            measured.co_run_seconds.push_back(seconds_since(start));
          }
          beside.stop();
          beside.check();
        }
        const StepEstimate amounts = estimate_step(unit, works);  // FLOPs and bytes: counts, not times
        const bool replays = std::any_of(works.begin(), works.end(), [](const RequestWork& w) { return w.cached; });
        // A replay reads every block's rows (kv always; hidden as planned: counted the same here).
        measured.cached_blocks = replays ? static_cast<int>(unit.blocks.size()) : 0;
        measured.computed_blocks = static_cast<int>(unit.blocks.size()) - measured.cached_blocks;
        measured.flops = amounts.flops;
        measured.load_bytes = amounts.load_bytes;
        const double best = *std::min_element(measured.seconds.begin(), measured.seconds.end());
        report.compute_samples.push_back({amounts.flops, best});
        profile.measured_steps.push_back(std::move(measured));
        for (EditJob* job : batch) {
          while (!job->denoised()) pipeline.step({job});
          const auto start = std::chrono::steady_clock::now();
          pipeline.finish_edit(*job);
          if (size == largest_size) {
            finish_seconds += seconds_since(start);
            ++finished;
          }
        }
        report_progress(options.progress, {"profile", ++done, total, 0});
      }
    }
  }
  std::vector<double> x, y;
  for (const ProfileSample& sample : report.compute_samples) x.push_back(sample.x), y.push_back(sample.seconds);
  const LinearFit step_fit = fit_linear_relative(x, y);  // steps span ~100x: fit relative errors
  const double blocks = double(profile.blocks.size());
  // The fitted intercept is per step; the model's is per block (where batching amortises it).
  profile.block_compute = {step_fit.slope, step_fit.intercept / blocks, step_fit.r2, step_fit.samples};
  profile.step_fixed_seconds = 0;
  x.clear();
  y.clear();
  for (const ProfileSample& sample : report.load_samples) x.push_back(sample.x), y.push_back(sample.seconds);
  if (x.size() >= 2) profile.block_load = fit_linear_relative(x, y);
  // Simulated requests take the largest size measured, so replaying measured steps interpolates.
  profile.image_tokens = largest_tokens;
  profile.preprocess_seconds = prepared ? prepare_seconds / prepared : 0;
  profile.postprocess_seconds = finished ? finish_seconds / finished : 0;
  return report;
}

}  // namespace flashps::serve
