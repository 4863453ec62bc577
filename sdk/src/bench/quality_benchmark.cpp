#include "bench/quality_benchmark.h"

#include <ATen/ATen.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <limits>
#include <random>
#include <sstream>

#include "bench/classical_inpaint.h"
#include "core/diagnostics/error.h"
#include "core/metrics/image_metrics.h"
#include "core/runtime/thread_clock.h"
#include "pipeline/flux/flux_inpaint_pipeline.h"
#include "pipeline/image_tensors.h"
#include "training/photo_set.h"
#include "workload/mask_ratio_trace.h"
#include "workload/random_masks.h"

namespace flashps::bench {
namespace {

Image mask_image(const at::Tensor& mask) {
  at::Tensor bytes = (mask * 255).round().to(at::kByte).contiguous();
  Image image(static_cast<int>(mask.size(1)), static_cast<int>(mask.size(0)), 1);
  std::memcpy(image.pixels.data(), bytes.data_ptr<uint8_t>(), image.pixels.size());
  return image;
}

std::string format_fixed(double value, int decimals) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(decimals) << value;
  return out.str();
}

struct Score {
  double psnr = 0, ssim = 0, block_step_ratio = 0, detail = 0;
};

// Masked-region scores of `result` against the ground truth, both [3, H, W] in [-1, 1].
Score score(const Image& result, const at::Tensor& truth, const at::Tensor& mask, int64_t token_pixels) {
  at::Tensor output = image_to_tensor(result);
  return {psnr(output, truth, 2.0, mask), ssim(output, truth, 2.0, mask), block_step_ratio(output, token_pixels, mask),
          detail_energy(output, mask)};
}

}  // namespace

QualityReport run_quality_benchmark(const QualityBenchmarkOptions& options) {
  training::PhotoSetOptions photo_options;
  photo_options.holdout_every = options.holdout_every;
  training::PhotoSet photos =
      training::PhotoSet::load(options.photo_folders,
                               options.holdout_every > 1 ? training::PhotoSplit::holdout : training::PhotoSplit::all,
                               photo_options);
  if (photos.size() == 0) throw Error("bench quality: no held-out photos in the given folders");
  workload::MaskRatioTrace trace = options.trace_files.empty() ? workload::MaskRatioTrace::fallback()
                                                               : workload::MaskRatioTrace::load(options.trace_files);
  auto pipeline = FluxInpaintPipeline::load(options.model_dir, at::kFloat);
  const int64_t token_pixels = 2 * pipeline->vae_scale_factor();  // Flux packs 2x2 latents per token

  QualityReport report;
  report.config = {{"model", options.model_dir},
                   {"photos", photos.paths()},
                   {"crops", options.crops},
                   {"crop_size", options.crop_size},
                   {"steps", options.steps},
                   {"seed", options.seed},
                   {"fidelity_crops", options.fidelity_crops},
                   {"telea", telea_available()}};
  // The model as its folder recommends, and with texture transfer the other way round.
  const bool texture_default = pipeline->recommends_texture_transfer();
  const std::string other_model = texture_default ? "model_no_texture" : "model_texture";
  std::vector<std::string> methods = {"model", other_model, "mean_fill", "pyramid"};
  if (telea_available()) methods.push_back("telea");
  std::vector<QualityRow> rows(methods.size());
  for (size_t m = 0; m < methods.size(); ++m) rows[m].method = methods[m];
  std::vector<double> mask_ratios;
  std::vector<int> block_ratio_counts(methods.size(), 0);
  std::vector<double> fill_detail(methods.size(), 0.0);
  double truth_detail = 0;

  const int total = options.crops + options.fidelity_crops;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < options.crops; ++i) {
    std::mt19937_64 rng(options.seed * 1000003ull + i);
    at::Tensor truth = photos.random_crop(options.crop_size, rng);
    at::Tensor mask = workload::random_mask(options.crop_size, options.crop_size, trace.sample(rng), rng);
    mask_ratios.push_back(mask.mean().item<double>());
    EditRequest request;
    request.image = tensor_to_image(truth);
    request.mask = mask_image(mask);
    request.seed = rng();
    request.steps = options.steps;
    request.mode = CacheMode::full;
    const double crop_truth_detail = detail_energy(truth, mask);
    const bool detail_counts = std::isfinite(crop_truth_detail);  // masks too thin for a pixel pair
    if (detail_counts) truth_detail += crop_truth_detail;
    for (size_t m = 0; m < methods.size(); ++m) {
      const auto method_start = std::chrono::steady_clock::now();
      Image result;
      if (methods[m] == "model") result = pipeline->edit(request).image;
      else if (methods[m] == other_model) {
        EditRequest other = request;
        other.texture_transfer = !texture_default;
        result = pipeline->edit(other).image;
      }
      else if (methods[m] == "mean_fill") result = mean_colour_fill(request.image, request.mask);
      else if (methods[m] == "pyramid") result = pyramid_inpaint(request.image, request.mask);
      else result = telea_inpaint(request.image, request.mask);
      rows[m].seconds += seconds_since(method_start);
      Score s = score(result, truth, mask, token_pixels);
      rows[m].psnr += s.psnr / options.crops;
      rows[m].ssim += s.ssim / options.crops;
      if (detail_counts && std::isfinite(s.detail)) fill_detail[m] += s.detail;
      if (std::isfinite(s.block_step_ratio)) {
        rows[m].block_step_ratio += s.block_step_ratio;
        ++block_ratio_counts[m];
      }
    }
    report_progress(options.progress, {"quality", i + 1, total, seconds_since(start)});
  }
  for (size_t m = 0; m < methods.size(); ++m)
    rows[m].block_step_ratio = block_ratio_counts[m] ? rows[m].block_step_ratio / block_ratio_counts[m]
                                                     : std::numeric_limits<double>::quiet_NaN();  // e.g. flat fills
  for (size_t m = 0; m < methods.size(); ++m)
    rows[m].detail_ratio = truth_detail > 0 ? fill_detail[m] / truth_detail : std::numeric_limits<double>::quiet_NaN();
  report.rows = rows;
  double mean_ratio = 0;
  for (double r : mask_ratios) mean_ratio += r / std::max<size_t>(1, mask_ratios.size());
  report.config["mean_mask_ratio"] = mean_ratio;

  // Fidelity: the template is registered with one mask and seed, then edited with another; the
  // replayed edit is compared with the same edit computed in full.
  std::vector<FidelityRow> fidelity = {{"kv"}, {"hidden"}};
  for (auto& row : fidelity) row.ssim_min = 1.0;
  double full_seconds = 0;
  std::vector<double> replay_seconds(2, 0.0);
  for (int i = 0; i < options.fidelity_crops; ++i) {
    std::mt19937_64 rng(options.seed * 7919ull + 17 + i);
    at::Tensor truth = photos.random_crop(options.crop_size, rng);
    EditRequest capture_request;
    capture_request.image = tensor_to_image(truth);
    capture_request.mask = mask_image(workload::random_mask(options.crop_size, options.crop_size, trace.sample(rng), rng));
    capture_request.seed = rng();
    capture_request.steps = options.steps;
    pipeline->register_template(capture_request, true, true);

    at::Tensor mask = workload::random_mask(options.crop_size, options.crop_size, trace.sample(rng), rng);
    EditRequest edit = capture_request;
    edit.mask = mask_image(mask);
    edit.seed = rng();
    edit.mode = CacheMode::full;
    auto full_start = std::chrono::steady_clock::now();
    const Image full = pipeline->edit(edit).image;
    full_seconds += seconds_since(full_start);
    at::Tensor full_tensor = image_to_tensor(full);
    for (size_t k = 0; k < fidelity.size(); ++k) {
      edit.mode = k == 0 ? CacheMode::kv : CacheMode::hidden;
      auto replay_start = std::chrono::steady_clock::now();
      EditResult replayed = pipeline->edit(edit);
      replay_seconds[k] += seconds_since(replay_start);
      if (!replayed.stats.cache_hit) throw Error("bench quality: the registered template was not replayed");
      Score s = score(replayed.image, full_tensor, mask, token_pixels);
      fidelity[k].ssim_mean += s.ssim / options.fidelity_crops;
      fidelity[k].psnr_mean += s.psnr / options.fidelity_crops;
      fidelity[k].ssim_min = std::min(fidelity[k].ssim_min, s.ssim);
    }
    report_progress(options.progress, {"quality", options.crops + i + 1, total, seconds_since(start)});
  }
  for (size_t k = 0; k < fidelity.size(); ++k)
    fidelity[k].speedup = replay_seconds[k] > 0 ? full_seconds / replay_seconds[k] : 0;
  if (options.fidelity_crops > 0) report.fidelity = fidelity;
  return report;
}

nlohmann::json QualityReport::to_json() const {
  nlohmann::json json = {{"config", config}, {"rows", nlohmann::json::array()}, {"fidelity", nlohmann::json::array()}};
  for (const QualityRow& row : rows)
    json["rows"].push_back({{"method", row.method}, {"psnr", row.psnr}, {"ssim", row.ssim},
                            {"block_step_ratio", row.block_step_ratio}, {"detail_ratio", row.detail_ratio},
                            {"seconds", row.seconds}});
  for (const FidelityRow& row : fidelity)
    json["fidelity"].push_back({{"mode", row.mode},
                                {"ssim_mean", row.ssim_mean},
                                {"ssim_min", row.ssim_min},
                                {"psnr_mean", row.psnr_mean},
                                {"speedup", row.speedup}});
  return json;
}

std::string QualityReport::table() const {
  std::ostringstream out;
  out << std::fixed;
  out << "masked-region quality on " << config.value("crops", 0) << " held-out " << config.value("crop_size", 0)
      << "px crops (mean mask ratio " << std::setprecision(3) << config.value("mean_mask_ratio", 0.0) << ")\n"
      << "blocks: mean step across token borders / within tokens (a photo: about 1; a mosaic: more)\n"
      << "detail: fine detail of the fill / of the photo (1: as textured as the photo; 0: flat)\n";
  out << "method      PSNR dB   SSIM  blocks  detail  seconds\n";
  for (const QualityRow& row : rows)
    out << std::left << std::setw(10) << row.method << std::right << std::setprecision(2) << std::setw(9) << row.psnr
        << std::setprecision(4) << std::setw(8) << row.ssim << std::setprecision(2) << std::setw(8)
        << (std::isfinite(row.block_step_ratio) ? format_fixed(row.block_step_ratio, 2) : std::string("-"))
        << std::setw(8) << (std::isfinite(row.detail_ratio) ? format_fixed(row.detail_ratio, 2) : std::string("-"))
        << std::setprecision(1) << std::setw(9) << row.seconds
        << "\n";
  if (!fidelity.empty()) {
    out << "mask-aware edit vs full compute (template captured with another seed and mask)\n";
    out << "mode      SSIM mean  SSIM min  PSNR dB  speedup\n";
    for (const FidelityRow& row : fidelity)
      out << std::left << std::setw(8) << row.mode << std::right << std::setprecision(4) << std::setw(11)
          << row.ssim_mean << std::setw(10) << row.ssim_min << std::setprecision(2) << std::setw(9) << row.psnr_mean
          << std::setw(9) << row.speedup << "\n";
  }
  return out.str();
}

}  // namespace flashps::bench
