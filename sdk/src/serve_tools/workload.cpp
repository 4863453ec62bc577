#include "serve_tools/workload.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/diagnostics/error.h"
#include "workload/mask_ratio_trace.h"

namespace flashps::serve {
namespace {

std::vector<std::string> trace_files(const std::string& name) {
  if (name == "production") return {"production_mask_ratios.csv"};
  if (name == "public-inpaint") return {"public_inpaint_mask_ratios.csv"};
  if (name == "public-adetailer") return {"public_adetailer_mask_ratios.csv"};
  if (name == "public") return {"public_inpaint_mask_ratios.csv", "public_adetailer_mask_ratios.csv"};
  if (name == "all")
    return {"production_mask_ratios.csv", "public_inpaint_mask_ratios.csv", "public_adetailer_mask_ratios.csv"};
  return {};
}

double sample_beta(std::mt19937_64& rng, double alpha, double beta) {
  const double x = std::gamma_distribution<double>(alpha, 1.0)(rng);
  const double y = std::gamma_distribution<double>(beta, 1.0)(rng);
  return x + y > 0 ? x / (x + y) : 0.0;
}

}  // namespace

MaskRatioSource MaskRatioSource::parametric(const std::string& name) {
  MaskRatioSource source;
  const BetaPart production{1, 2.505, 19.814}, inpaint{1918, 0.563, 1.028}, adetailer{1870, 1.502, 51.027};
  if (name == "production") source.parts_ = {production};
  else if (name == "public-inpaint") source.parts_ = {inpaint};
  else if (name == "public-adetailer") source.parts_ = {adetailer};
  else if (name == "public") source.parts_ = {inpaint, adetailer};
  else if (name == "all") source.parts_ = {{970, 2.505, 19.814}, inpaint, adetailer};
  else throw Error("unknown mask-ratio trace \"" + name + "\" (production, public, public-inpaint, public-adetailer, all, or a CSV file)");
  source.description_ = name + " (Beta fit to the trace; trace files not found)";
  return source;
}

MaskRatioSource MaskRatioSource::named(const std::string& name, const std::string& traces_dir) {
  std::vector<std::string> files = trace_files(name);
  if (files.empty()) {  // a CSV path
    if (!std::filesystem::exists(name))
      throw Error("unknown mask-ratio trace \"" + name +
                  "\": not a trace name (production, public, public-inpaint, public-adetailer, all) or an existing CSV file");
    MaskRatioSource source;
    source.samples_ = workload::MaskRatioTrace::load({name}).ratios();
    source.description_ = name;
    return source;
  }
  std::vector<std::string> paths;
  for (const std::string& file : files) {
    const std::string path = (std::filesystem::path(traces_dir) / file).string();
    if (traces_dir.empty() || !std::filesystem::exists(path)) return parametric(name);
    paths.push_back(path);
  }
  MaskRatioSource source;
  source.samples_ = workload::MaskRatioTrace::load(paths).ratios();
  source.description_ = name + " (" + std::to_string(source.samples_.size()) + " requests of " + traces_dir + ")";
  return source;
}

double MaskRatioSource::sample(std::mt19937_64& rng) const {
  if (!samples_.empty()) return samples_[std::uniform_int_distribution<size_t>(0, samples_.size() - 1)(rng)];
  double total = 0;
  for (const BetaPart& part : parts_) total += part.weight;
  double pick = std::uniform_real_distribution<double>(0, total)(rng);
  for (const BetaPart& part : parts_) {
    if (pick <= part.weight) return sample_beta(rng, part.alpha, part.beta);
    pick -= part.weight;
  }
  return sample_beta(rng, parts_.back().alpha, parts_.back().beta);
}

std::vector<TraceRequest> make_workload(const WorkloadOptions& options, const MaskRatioSource& ratios) {
  if (!(options.requests_per_second > 0)) throw Error("request rate must be positive");
  if (options.requests < 0) throw Error("request count must not be negative");
  if (options.arrivals != "poisson" && options.arrivals != "gamma")
    throw Error("unknown arrival process \"" + options.arrivals + "\" (poisson, gamma)");
  if (options.arrivals == "gamma" && !(options.cv > 0)) throw Error("gamma arrivals need a positive --cv");
  std::mt19937_64 rng(options.seed);
  const double cv = options.arrivals == "poisson" ? 1.0 : options.cv;
  const double shape = 1.0 / (cv * cv);
  std::gamma_distribution<double> gap(shape, 1.0 / (options.requests_per_second * shape));
  std::vector<TraceRequest> requests;
  double now = 0;
  for (int i = 0; i < options.requests; ++i) {
    now += gap(rng);
    TraceRequest request;
    request.arrival = now;
    request.mask_ratio = std::clamp(ratios.sample(rng), 0.0, 1.0);
    request.work.steps = options.steps;
    request.work.image_tokens = options.image_tokens;
    request.work.text_tokens = options.text_tokens;
    request.work.masked_tokens = std::clamp<int64_t>(std::llround(request.mask_ratio * double(options.image_tokens)), 0,
                                                     options.image_tokens);
    request.work.cached = true;
    requests.push_back(request);
  }
  return requests;
}

}  // namespace flashps::serve
