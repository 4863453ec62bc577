#include "serve/batch_size.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

namespace flashps::serve {
namespace {

constexpr double kBatchingPaysBelow = 0.9;  // batched seconds over single ones, per request
constexpr size_t kMinimumComparisons = 3;

// A step's path: replayed or computed in full, at an image size (their costs differ in shape).
using StepPath = std::pair<bool, int64_t>;

StepPath path_of(const MeasuredStep& step) {
  const bool cached = std::any_of(step.batch.begin(), step.batch.end(), [](const RequestWork& w) { return w.cached; });
  return {cached, step.batch.front().image_tokens};
}

// Seconds of a single-request step of `flops`, linear between the nearest measured ones
// (extended from the outer two beyond them).
double interpolate(const std::vector<std::pair<double, double>>& points, double flops) {
  size_t upper = 1;
  while (upper + 1 < points.size() && points[upper].first < flops) ++upper;
  const auto& [x0, y0] = points[upper - 1];
  const auto& [x1, y1] = points[upper];
  return x1 == x0 ? y0 : y0 + (y1 - y0) * (flops - x0) / (x1 - x0);
}

}  // namespace

BatchSizeChoice choose_max_batch(const DeviceProfile& profile) {
  std::map<StepPath, std::vector<std::pair<double, double>>> singles;  // path -> (flops, seconds)
  for (const MeasuredStep& step : profile.measured_steps)
    if (step.batch.size() == 1 && !step.seconds.empty() && step.flops > 0)
      singles[path_of(step)].push_back({step.flops, median_of(step.seconds)});
  for (auto& [path, points] : singles) std::sort(points.begin(), points.end());

  std::vector<double> ratios;
  for (const MeasuredStep& step : profile.measured_steps) {
    if (step.batch.size() < 2 || step.seconds.empty() || step.flops <= 0) continue;
    const auto found = singles.find(path_of(step));
    if (found == singles.end() || found->second.size() < 2) continue;
    // Requests of one measured batch share an image size and a mask ratio, so each is taken
    // at the batch's mean FLOPs.
    const double n = double(step.batch.size());
    const double single = interpolate(found->second, step.flops / n);
    if (single > 0) ratios.push_back(median_of(step.seconds) / (n * single));
  }
  BatchSizeChoice choice;
  char text[160];
  if (ratios.size() < kMinimumComparisons) {
    choice.reason = "the device profile has no batched steps to compare with single ones";
    return choice;
  }
  choice.batched_over_single = median_of(ratios);
  const bool pays = choice.batched_over_single < kBatchingPaysBelow;
  choice.max_batch = pays ? kDefaultMaxBatch : 1;
  std::snprintf(text, sizeof text, "measured batched steps cost %.2fx single steps per request (%zu compared): %s",
                choice.batched_over_single, ratios.size(), pays ? "batching pays" : "batching saves under 10%");
  choice.reason = text;
  return choice;
}

BatchingConfig batching_for_device(BatchingConfig config, const DeviceProfile& profile) {
  if (config.max_batch == 0) config.max_batch = choose_max_batch(profile).max_batch;
  return config;
}

}  // namespace flashps::serve
