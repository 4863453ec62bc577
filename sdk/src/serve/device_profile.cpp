#include "serve/device_profile.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "engine/planner.h"

namespace flashps::serve {
namespace {

bool same_work(const engine::BlockWork& a, const engine::BlockWork& b) {
  return a.flops_per_query_row == b.flops_per_query_row && a.flops_per_key_row == b.flops_per_key_row &&
         a.flops_per_query_key == b.flops_per_query_key &&
         a.cached_bytes_per_row_kv == b.cached_bytes_per_row_kv &&
         a.cached_bytes_per_row_hidden == b.cached_bytes_per_row_hidden;
}

struct BlockAmounts {
  double flops_with_cache = 0, flops_without_cache = 0, bytes = 0;
};

BlockAmounts block_amounts(const engine::BlockWork& work, engine::CacheMode kind,
                           const std::vector<RequestWork>& batch) {
  BlockAmounts amounts;
  for (const RequestWork& request : batch) {
    const int64_t all = request.text_tokens + request.image_tokens;
    const double weight = request.weight;
    const double full = weight * engine::block_flops(work, all, all, all);
    amounts.flops_without_cache += full;
    if (!request.cached) {
      amounts.flops_with_cache += full;
      continue;
    }
    const int64_t computed = request.text_tokens + request.masked_tokens;
    amounts.flops_with_cache +=
        weight * engine::block_flops(work, computed, kind == engine::CacheMode::kv ? computed : all, all);
    const double per_row = kind == engine::CacheMode::kv ? work.cached_bytes_per_row_kv : work.cached_bytes_per_row_hidden;
    amounts.bytes += weight * double(request.image_tokens - request.masked_tokens) * per_row;
  }
  return amounts;
}

nlohmann::json fit_json(const LinearFit& fit) {
  return {{"slope", fit.slope}, {"intercept", fit.intercept}, {"r2", fit.r2}, {"samples", fit.samples}};
}

LinearFit fit_from(const nlohmann::json& json) {
  LinearFit fit;
  fit.slope = json.at("slope").get<double>();
  fit.intercept = json.at("intercept").get<double>();
  fit.r2 = json.value("r2", 1.0);
  fit.samples = json.value("samples", 0);
  return fit;
}

}  // namespace

StepEstimate estimate_step(const DeviceProfile& profile, const std::vector<RequestWork>& batch) {
  StepEstimate estimate;
  if (batch.empty()) return estimate;
  const bool any_cached = std::any_of(batch.begin(), batch.end(), [](const RequestWork& r) { return r.cached; });
  std::vector<engine::BlockTimes> times;
  times.reserve(profile.blocks.size());
  const engine::BlockWork* previous = nullptr;
  BlockAmounts amounts;
  engine::BlockTimes block_times;
  for (const engine::BlockWork& work : profile.blocks) {
    if (!previous || !same_work(*previous, work)) {  // models repeat identical blocks
      amounts = block_amounts(work, profile.cache_mode, batch);
      block_times.compute_with_cache = std::max(0.0, profile.block_compute(amounts.flops_with_cache));
      block_times.compute_without_cache = std::max(0.0, profile.block_compute(amounts.flops_without_cache));
      block_times.load = amounts.bytes > 0 ? std::max(0.0, profile.block_load(amounts.bytes)) : 0.0;
      previous = &work;
    }
    times.push_back(block_times);
  }
  std::vector<bool> use_cache(times.size(), any_cached);
  if (any_cached && profile.cache_mode == engine::CacheMode::hidden) use_cache = engine::plan_pipeline_greedy(times).use_cache;
  estimate.seconds = profile.step_fixed_seconds + engine::pipeline_latency(times, use_cache);
  previous = nullptr;
  for (size_t i = 0; i < profile.blocks.size(); ++i) {
    const engine::BlockWork& work = profile.blocks[i];
    if (!previous || !same_work(*previous, work)) amounts = block_amounts(work, profile.cache_mode, batch), previous = &work;
    estimate.flops += use_cache[i] ? amounts.flops_with_cache : amounts.flops_without_cache;
    estimate.load_bytes += use_cache[i] ? amounts.bytes : 0.0;
  }
  return estimate;
}

engine::DeviceSpeed device_speed_of(const DeviceProfile& profile) {
  engine::DeviceSpeed speed;
  if (profile.block_compute.slope > 0) speed.flops_per_second = 1.0 / profile.block_compute.slope;
  speed.fixed_seconds_per_block = std::max(0.0, profile.block_compute.intercept);
  if (profile.block_load.slope > 0) speed.load_bytes_per_second = 1.0 / profile.block_load.slope;
  speed.fixed_seconds_per_load = std::max(0.0, profile.block_load.intercept);
  return speed;
}

std::string default_profile_path() {
  const char* cache = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const std::string base = cache && *cache ? std::string(cache) : std::string(home && *home ? home : ".") + "/.cache";
  return base + "/flashps/device-profile.json";
}

std::string resolve_profile_path(const std::string& given) {
  if (!given.empty()) return given;
  if (const char* variable = std::getenv("FLASHPS_PROFILE"); variable && *variable)
    return std::string(variable) == "none" ? std::string() : std::string(variable);
  const std::string fallback = default_profile_path();
  std::error_code error;
  return std::filesystem::is_regular_file(fallback, error) ? fallback : std::string();
}

DeviceProfile h800_flux_profile() {
  DeviceProfile profile;
  profile.name = "h800-flux (paper-class constants)";
  const double dim = 3072;
  engine::BlockWork work;
  work.flops_per_query_row = 2.0 * 10.0 * dim * dim;
  work.flops_per_key_row = 2.0 * 2.0 * dim * dim;
  work.flops_per_query_key = 2.0 * 2.0 * dim;
  work.cached_bytes_per_row_kv = 2.0 * dim * 2;
  work.cached_bytes_per_row_hidden = dim * 2;
  profile.blocks.assign(57, work);
  profile.cache_mode = engine::CacheMode::kv;
  profile.block_compute = {1.0 / 400e12, 250e-6, 1.0, 0};
  profile.block_load = {1.0 / 50e9, 20e-6, 1.0, 0};
  profile.step_fixed_seconds = 2e-3;
  profile.preprocess_seconds = 0.30;
  profile.postprocess_seconds = 0.36;
  profile.image_tokens = 4096;
  profile.text_tokens = 512;
  profile.steps = 28;
  return profile;
}

void write_device_profile(const DeviceProfile& profile, const std::string& path) {
  nlohmann::json blocks = nlohmann::json::array();
  for (const engine::BlockWork& work : profile.blocks)
    blocks.push_back({{"flops_per_query_row", work.flops_per_query_row},
                      {"flops_per_key_row", work.flops_per_key_row},
                      {"flops_per_query_key", work.flops_per_query_key},
                      {"cached_bytes_per_row_kv", work.cached_bytes_per_row_kv},
                      {"cached_bytes_per_row_hidden", work.cached_bytes_per_row_hidden}});
  nlohmann::json json = {{"format", "flashps-device-profile"},
                         {"version", 1},
                         {"name", profile.name},
                         {"cache_mode", engine::cache_mode_name(profile.cache_mode)},
                         {"block_compute_seconds_vs_flops", fit_json(profile.block_compute)},
                         {"block_load_seconds_vs_bytes", fit_json(profile.block_load)},
                         {"step_fixed_seconds", profile.step_fixed_seconds},
                         {"preprocess_seconds", profile.preprocess_seconds},
                         {"postprocess_seconds", profile.postprocess_seconds},
                         {"image_tokens", profile.image_tokens},
                         {"text_tokens", profile.text_tokens},
                         {"steps", profile.steps},
                         {"blocks", blocks}};
  if (!profile.measured_steps.empty()) {
    nlohmann::json steps = nlohmann::json::array();
    for (const MeasuredStep& step : profile.measured_steps) {
      nlohmann::json batch = nlohmann::json::array();
      for (const RequestWork& work : step.batch)
        batch.push_back({{"image_tokens", work.image_tokens},
                         {"masked_tokens", work.masked_tokens},
                         {"text_tokens", work.text_tokens},
                         {"cached", work.cached}});
      steps.push_back({{"batch", batch},
                       {"cached_blocks", step.cached_blocks},
                       {"computed_blocks", step.computed_blocks},
                       {"flops", step.flops},
                       {"load_bytes", step.load_bytes},
                       {"seconds", step.seconds}});
      if (!step.co_run_seconds.empty()) steps.back()["co_run_seconds"] = step.co_run_seconds;
    }
    json["measured_steps"] = steps;
    if (profile.co_runners > 0) json["co_runners"] = profile.co_runners;
  }
  write_json_file(path, json);
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double co_run_slowdown(const MeasuredStep& step) {
  if (step.co_run_seconds.empty() || step.seconds.empty()) return 1.0;
  return median_of(step.co_run_seconds) / median_of(step.seconds);
}

DeviceProfile read_device_profile(const std::string& path) {
  const nlohmann::json json = read_json_file(path);
  try {
    if (json.value("format", std::string()) != "flashps-device-profile")
      throw Error("not a device profile (\"format\" is not \"flashps-device-profile\")");
    if (json.value("version", 0) != 1) throw Error("unsupported profile version");
    DeviceProfile profile;
    profile.name = json.value("name", std::string(path));
    // "cache_kind": the key profiles written before the one cache-mode name used.
    const std::string mode_key = json.contains("cache_mode") || !json.contains("cache_kind") ? "cache_mode" : "cache_kind";
    profile.cache_mode = engine::replay_mode(engine::cache_mode_from_name(json.at(mode_key).get<std::string>()),
                                             "a device profile's cache_mode");
    profile.block_compute = fit_from(json.at("block_compute_seconds_vs_flops"));
    profile.block_load = fit_from(json.at("block_load_seconds_vs_bytes"));
    profile.step_fixed_seconds = json.at("step_fixed_seconds").get<double>();
    profile.preprocess_seconds = json.at("preprocess_seconds").get<double>();
    profile.postprocess_seconds = json.at("postprocess_seconds").get<double>();
    profile.image_tokens = json.at("image_tokens").get<int64_t>();
    profile.text_tokens = json.at("text_tokens").get<int64_t>();
    profile.steps = json.at("steps").get<int>();
    for (const auto& block : json.at("blocks")) {
      engine::BlockWork work;
      work.flops_per_query_row = block.at("flops_per_query_row").get<double>();
      work.flops_per_key_row = block.at("flops_per_key_row").get<double>();
      work.flops_per_query_key = block.at("flops_per_query_key").get<double>();
      work.cached_bytes_per_row_kv = block.at("cached_bytes_per_row_kv").get<double>();
      work.cached_bytes_per_row_hidden = block.at("cached_bytes_per_row_hidden").get<double>();
      profile.blocks.push_back(work);
    }
    if (profile.blocks.empty()) throw Error("profile has no blocks");
    for (const auto& entry : json.value("measured_steps", nlohmann::json::array())) {
      MeasuredStep step;
      for (const auto& request : entry.at("batch")) {
        RequestWork work;
        work.image_tokens = request.at("image_tokens").get<int64_t>();
        work.masked_tokens = request.at("masked_tokens").get<int64_t>();
        work.text_tokens = request.at("text_tokens").get<int64_t>();
        work.cached = request.at("cached").get<bool>();
        if (work.image_tokens < 1 || work.masked_tokens < 0 || work.masked_tokens > work.image_tokens ||
            work.text_tokens < 0)
          throw Error("measured_steps: a request's token counts are out of range");
        step.batch.push_back(work);
      }
      step.cached_blocks = entry.at("cached_blocks").get<int>();
      step.computed_blocks = entry.at("computed_blocks").get<int>();
      step.flops = entry.at("flops").get<double>();
      step.load_bytes = entry.at("load_bytes").get<double>();
      step.seconds = entry.at("seconds").get<std::vector<double>>();
      if (step.batch.empty() || step.seconds.empty() || !(step.flops > 0))
        throw Error("measured_steps: a step without requests, timings or FLOPs");
      step.co_run_seconds = entry.value("co_run_seconds", std::vector<double>());
      for (const auto* times : {&step.seconds, &step.co_run_seconds})
        for (double seconds : *times)
          if (!(seconds > 0) || !std::isfinite(seconds)) throw Error("measured_steps: a time that is not positive");
      profile.measured_steps.push_back(std::move(step));
    }
    profile.co_runners = json.value("co_runners", 0);
    const bool co_run_times = std::any_of(profile.measured_steps.begin(), profile.measured_steps.end(),
                                          [](const MeasuredStep& step) { return !step.co_run_seconds.empty(); });
    if (profile.co_runners < 0 || profile.co_runners > 1024 || co_run_times != (profile.co_runners > 0))
      throw Error("co_runners must be 1 to 1024 where measured steps have co_run_seconds, else absent");
    if (profile.image_tokens < 1 || profile.steps < 1) throw Error("image_tokens and steps must be positive");
    return profile;
  } catch (const nlohmann::json::exception& error) {
    throw Error(path + ": device profile: " + error.what());
  } catch (const Error& error) {
    throw Error(path + ": " + error.what());
  }
}

}  // namespace flashps::serve
