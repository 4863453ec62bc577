#include "bench/edit_benchmark.h"

#include <ATen/ATen.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>

#include "bench/bench_support.h"
#include "core/kernels/dnnl_matmul.h"
#include "core/metrics/image_metrics.h"
#include "core/diagnostics/phase_profile.h"
#include "core/runtime/runtime.h"
#include "engine/capture_router.h"
#include "engine/cost_model.h"
#include "engine/planner.h"
#include "engine/replay_router.h"
#include "engine/speed_estimator.h"
#include "models/flux/flux_block_work.h"
#include "models/flux/flux_transformer.h"
#include "models/common/layers.h"
#include "models/random/random_weights.h"
#include "pipeline/flux/flux_packing.h"
#include "serve/device_selection.h"

namespace flashps::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Workload {
  at::Tensor latents, conditioning, text, pooled, img_ids, txt_ids;
  std::vector<double> sigmas;  // steps + 1
};

using Route = std::function<void(FluxRequest&, int)>;

// Waits for the device's queued work (a GPU runs kernels asynchronously), so a run is timed whole.
void finish_device_work(const at::Tensor& result) {
  if (!result.device().is_cpu()) (void)result.sum().item<double>();
}

at::Tensor denoise(const FluxTransformer& model, const Workload& work, const Route& route) {
  at::Tensor latents = work.latents.clone();
  const auto dtype = at::kFloat;  // activations stay float32; bf16 models run bf16 products
  at::Tensor conditioning = work.conditioning.to(dtype);
  // As the pipeline steps a request: RoPE tables once, and the conditioning's share of the input
  // projection once for the rows the model carries (again only if the route changes them).
  ConditioningEmbeddingCache conditioning_embedding;
  const auto image_rope = std::make_shared<const RotaryTables>(model->rotary_tables(work.img_ids));
  const auto text_rope = std::make_shared<const RotaryTables>(model->rotary_tables(work.txt_ids));
  for (size_t step = 0; step + 1 < work.sigmas.size(); ++step) {
    FluxRequest request;
    request.hidden_states = latents.to(dtype);
    request.encoder_hidden_states = work.text;
    request.pooled_projections = work.pooled;
    request.img_ids = work.img_ids;
    request.txt_ids = work.txt_ids;
    request.image_rope = image_rope;
    request.text_rope = text_rope;
    request.timestep = work.sigmas[step];
    if (route) route(request, static_cast<int>(step));
    if (conditioning.defined())
      request.conditioning_embedding = conditioning_embedding.get(*model, conditioning, request.carried_rows);
    at::Tensor velocity = model->forward({request})[0].to(at::kFloat);
    latents = latents + (work.sigmas[step + 1] - work.sigmas[step]) * velocity;  // Euler step
  }
  finish_device_work(latents);
  return latents;
}

at::ScalarType dtype_of(const std::string& name) { return name == "bf16" ? at::kBFloat16 : at::kFloat; }

// One run under the phase profiler: milliseconds per step of each phase, the whole loop's
// milliseconds per step, and what lies outside the model's phases (scheduler, routing set-up).
nlohmann::json profiled_run(const std::string& mode, double ratio, int steps, const std::function<void()>& run) {
  PhaseTotals totals;
  const auto start = Clock::now();
  {
    PhaseRecording recording(&totals);
    run();
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  nlohmann::json phases;
  for (int p = 0; p < kPhaseCount; ++p)  // phases of other model families (convolutions) stay out
    if (totals.seconds[p] > 0) phases[phase_name(static_cast<Phase>(p))] = 1e3 * totals.seconds[p] / steps;
  phases["outside the model"] = 1e3 * (seconds - totals.total()) / steps;
  return {{"mode", mode}, {"mask_ratio", ratio}, {"ms_per_step", 1e3 * seconds / steps}, {"phases", phases}};
}


}  // namespace

FluxConfig flux1_size_config() {
  FluxConfig config;
  config.in_channels = 384;
  config.out_channels = 64;
  config.num_layers = 19;
  config.num_single_layers = 38;
  config.attention_head_dim = 128;
  config.num_attention_heads = 24;
  config.joint_attention_dim = 4096;
  config.pooled_projection_dim = 768;
  config.axes_dims_rope = {16, 56, 56};
  return config;
}

FluxConfig reference_bench_config() {
  FluxConfig config;
  config.in_channels = 384;
  config.out_channels = 64;
  config.num_layers = 4;
  config.num_single_layers = 8;
  config.attention_head_dim = 128;
  config.num_attention_heads = 4;
  config.joint_attention_dim = 512;
  config.pooled_projection_dim = 256;
  config.axes_dims_rope = {16, 56, 56};
  return config;
}

EditBenchmarkReport run_edit_benchmark(const EditBenchmarkOptions& options) {
  at::NoGradGuard no_grad;
  EditBenchmarkReport report;
  const FluxConfig& config = options.model;
  const int64_t tokens = options.grid * options.grid;
  report.config = {{"model", config.to_json()},
                   {"image_tokens", tokens},
                   {"text_tokens", options.text_tokens},
                   {"steps", options.steps},
                   {"threads", runtime_threads()},
                   {"device", options.device},
                   {"repeats", options.repeats}};
  const at::Device device = serve::select_device(options.device);  // a clear error for a missing GPU

  auto generator = at::detail::createCPUGenerator(options.seed);
  Workload work;
  const int64_t latent_channels = config.out_channels;
  work.latents = at::randn({tokens, latent_channels}, generator);
  work.conditioning = at::randn({tokens, config.in_channels - latent_channels}, generator);
  work.text = at::randn({options.text_tokens, config.joint_attention_dim}, generator);
  work.pooled = at::randn({config.pooled_projection_dim}, generator);
  work.img_ids = flux_image_ids(options.grid * 2, options.grid * 2);
  work.txt_ids = at::zeros({options.text_tokens, 3});
  // Drawn on the host (the same numbers on every device), then moved.
  for (at::Tensor* tensor : {&work.latents, &work.conditioning, &work.text, &work.pooled, &work.img_ids, &work.txt_ids})
    *tensor = tensor->to(device);
  for (int i = 0; i <= options.steps; ++i) work.sigmas.push_back(1.0 - double(i) / options.steps);

  FluxTransformer model(config);
  fill_random_weights(*model, options.seed + 1);
  prefer_fast_linear_layout(*model);
  std::vector<int> steps;
  for (int i = 0; i < options.steps; ++i) steps.push_back(i);
  int done = 0;
  const int total = int(options.dtypes.size() * (1 + 2 * options.mask_ratios.size()));
  auto tick = [&] { report_progress(options.progress, {"bench", ++done, total, 0}); };

  for (const std::string& dtype_name : options.dtypes) {
    model->to(device, dtype_of(dtype_name));
    prefer_fast_linear_layout(*model);
    denoise(model, work, nullptr);  // warm-up: first-touch of buffers and kernels

    engine::MemoryCaptureStore store;
    auto writer = store.begin({"bench-template", dtype_name, "bench"});
    engine::CaptureRouter capture_router(*writer, true, true, model->dtype());
    const auto capture_start = Clock::now();
    const at::Tensor template_result = denoise(model, work, [&](FluxRequest& request, int step) {
      capture_router.set_step(step);
      request.router = &capture_router;
    });
    auto capture = writer->commit();
    report.extra["capture"][dtype_name] = {
        {"bytes_kv_and_hidden", capture->bytes()},
        {"seconds", std::chrono::duration<double>(Clock::now() - capture_start).count()}};

    // The planner's speed model as a pipeline keeps it without a profile file: an online
    // estimate (engine/speed_estimator.h), first fed a run at each of six configurations no
    // row below uses (kv and hidden at m = 0.03, 0.25 and 0.7: spanning the rows' range, as a
    // profile spans the sizes it is used for), then every row once its prediction is recorded.
    // So each prediction is made before the run it predicts.
    const auto work_per_block = flux_block_work(config, c10::elementSize(model->dtype()));
    engine::SpeedEstimator estimator;
    const int blocks = static_cast<int>(work_per_block.size());
    const auto step_flops = [&](const engine::TokenCounts& counts, engine::CacheMode kind, const std::vector<bool>& use_cache) {
      return engine::planned_flops(work_per_block, std::vector<engine::TokenCounts>(blocks, counts), kind, use_cache);
    };
    // What a run is for the estimate's drift per kind: a replay's mode, or full when no block replays.
    const auto step_kind = [](engine::CacheMode kind, const std::vector<bool>& use_cache) {
      if (std::none_of(use_cache.begin(), use_cache.end(), [](bool cached) { return cached; })) return engine::StepKind::full;
      return kind == engine::CacheMode::kv ? engine::StepKind::kv : engine::StepKind::hidden;
    };
    const auto plan_of = [&](const engine::TokenCounts& counts, engine::CacheMode kind) {
      std::vector<bool> use_cache(blocks, true);
      if (kind == engine::CacheMode::hidden)
        use_cache = engine::plan_pipeline(engine::estimate_block_times(work_per_block, counts, kind, estimator.speed(engine::StepKind::hidden)),
                                          engine::loader_model(kind))
                        .use_cache;
      return use_cache;
    };
    const auto predict = [&](const engine::TokenCounts& counts, engine::CacheMode kind, const std::vector<bool>& use_cache,
                             int steps_run) {
      const auto times = engine::estimate_block_times(work_per_block, counts, kind, estimator.speed(step_kind(kind, use_cache)));
      return steps_run * engine::pipeline_latency(times, use_cache, engine::loader_model(kind));
    };
    const auto observe = [&](double flops, double seconds, const engine::ReplayStats& stats, int steps_run,
                             engine::StepKind kind) {
      // What the estimator was fed, in order: to study its model offline.
      report.extra["speed_observations"][dtype_name].push_back(
          {{"flops_per_block", flops / blocks}, {"seconds_per_block", (seconds - stats.load_wait_seconds) / steps_run / blocks}});
      estimator.observe_compute(flops, blocks, (seconds - stats.load_wait_seconds) / steps_run, kind);
      estimator.observe_load(double(stats.bytes_loaded), stats.reads, stats.load_seconds);
    };
    const auto replay = [&](const engine::TokenMask& mask, engine::CacheMode kind, const std::vector<bool>& use_cache,
                            const Workload& run, const std::vector<int>& run_steps, engine::ReplayStats& stats,
                            engine::KvAccess kv_access = engine::KvAccess::automatic) {
      return fastest_of(options.repeats, [&] {
        engine::ReplayRouter router(capture, mask, kind, use_cache, run_steps, device,
                                    engine::kDefaultPrefetchDepth, kv_access);
        denoise(model, run, [&](FluxRequest& request, int step) {
          router.set_step(step);
          request.router = &router;
          request.carried_rows = router.carried_rows();
        });
        stats = router.stats();
      });
    };
    // Whole runs, as the rows are: a run's own setup (its loader, its masks) is then in the
    // fixed cost the same way.
    for (double ratio : {0.03, 0.25, 0.7})
      for (engine::CacheMode kind : {engine::CacheMode::kv, engine::CacheMode::hidden}) {
        const engine::TokenMask mask = blob_mask(options.grid, ratio);
        const engine::TokenCounts counts{options.text_tokens, tokens, mask.masked_count()};
        const std::vector<bool> use_cache(blocks, true);
        engine::ReplayStats stats;
        const double seconds = replay(mask, kind, use_cache, work, steps, stats);
        observe(step_flops(counts, kind, use_cache), seconds, stats, options.steps, step_kind(kind, use_cache));
      }

    const engine::TokenCounts all_tokens{options.text_tokens, tokens, tokens};
    const std::vector<bool> no_cache(blocks, false);
    const double full_predicted = predict(all_tokens, engine::CacheMode::kv, no_cache, options.steps);
    const double full_seconds = fastest_of(options.repeats, [&] { denoise(model, work, nullptr); });
    EditBenchmarkRow full_row;
    full_row.mode = "full";
    full_row.dtype = dtype_name;
    full_row.seconds = full_seconds;
    full_row.predicted_seconds = full_predicted;
    report.rows.push_back(full_row);
    observe(step_flops(all_tokens, engine::CacheMode::kv, no_cache), full_seconds, {}, options.steps, engine::StepKind::full);
    if (options.phase_profile)
      report.extra["phase_profile"][dtype_name].push_back(
          profiled_run("full", 1.0, options.steps, [&] { denoise(model, work, nullptr); }));
    tick();

    if (options.compare_allocator && device.is_cpu()) {  // glibc's malloc is the host's
      FluxRequest request;
      request.hidden_states = at::cat({work.latents, work.conditioning}, 1);
      request.encoder_hidden_states = work.text;
      request.pooled_projections = work.pooled;
      request.img_ids = work.img_ids;
      request.txt_ids = work.txt_ids;
      request.timestep = 0.5;
      auto forward_seconds = [&] { return fastest_of(2, [&] { model->forward({request}); }); };
      set_keep_freed_memory(false);
      const double default_malloc = forward_seconds();
      set_keep_freed_memory(true);
      const double tuned_malloc = forward_seconds();
      report.extra["forward_seconds"][dtype_name] = {{"glibc_default_malloc", default_malloc},
                                                     {"malloc_keep_freed_memory", tuned_malloc}};
      if (dtype_name == "bf16") {  // without oneDNN's bf16 products: LibTorch's bf16 linear, float32 attention
        set_dnnl_bf16_linear_enabled(false);
        report.extra["forward_seconds"][dtype_name]["libtorch_bf16_linear_float_attention"] = forward_seconds();
        set_dnnl_bf16_linear_enabled(true);
      }
    }

    for (double ratio : options.mask_ratios) {
      const engine::TokenMask mask = blob_mask(options.grid, ratio);
      const engine::TokenCounts counts{options.text_tokens, tokens, mask.masked_count()};
      const double full_flops = engine::forward_flops(work_per_block, counts);
      for (engine::CacheMode kind : {engine::CacheMode::kv, engine::CacheMode::hidden}) {
        const std::vector<bool> use_cache = plan_of(counts, kind);
        const double predicted = predict(counts, kind, use_cache, options.steps);
        engine::ReplayStats stats;
        const double seconds = replay(mask, kind, use_cache, work, steps, stats);
        observe(step_flops(counts, kind, use_cache), seconds, stats, options.steps, step_kind(kind, use_cache));
        EditBenchmarkRow row;
        row.mode = engine::cache_mode_name(kind);
        row.mask_ratio = ratio;
        row.dtype = dtype_name;
        row.seconds = seconds;
        row.predicted_seconds = predicted;
        row.speedup = full_seconds / seconds;
        row.ideal_speedup = full_flops / engine::forward_flops(work_per_block, counts, kind);
        row.cache_bytes = stats.bytes_loaded + stats.bytes_in_place;  // read from the capture either way
        row.blocks_from_cache = stats.blocks_from_cache;
        row.load_wait_seconds = stats.load_wait_seconds;
        report.rows.push_back(row);
        if (kind == engine::CacheMode::kv && device.is_cpu()) {
          // Side by side, both ways of reaching resident cached keys/values (the row above used
          // the automatic choice, engine/replay_router.h).
          engine::ReplayStats unused;
          const double in_place = replay(mask, kind, use_cache, work, steps, unused, engine::KvAccess::in_place_when_resident);
          const double gathered = replay(mask, kind, use_cache, work, steps, unused, engine::KvAccess::gathered);
          report.extra["kv_access_seconds"][dtype_name].push_back(
              {{"mask_ratio", ratio}, {"automatic", seconds}, {"in_place", in_place}, {"gathered", gathered}});
          if (dtype_name == "bf16") {  // and without oneDNN's bf16 products (core/kernels/dnnl_matmul.h)
            set_dnnl_bf16_linear_enabled(false);
            const double libtorch = replay(mask, kind, use_cache, work, steps, unused);
            set_dnnl_bf16_linear_enabled(true);
            report.extra["bf16_products_seconds"].push_back({{"mode", "kv"},
                                                             {"mask_ratio", ratio},
                                                             {"onednn_bf16_products", seconds},
                                                             {"libtorch_bf16_linear_float_attention", libtorch}});
          }
        }
        if (options.phase_profile) {
          std::vector<engine::KvAccess> accesses{engine::KvAccess::automatic};
          if (kind == engine::CacheMode::kv && device.is_cpu())
            accesses = {engine::KvAccess::in_place_when_resident, engine::KvAccess::gathered};
          for (engine::KvAccess access : accesses) {
            const bool gathered = access == engine::KvAccess::gathered;
            double loader_wait = 0;
            nlohmann::json profile = profiled_run(gathered ? "kv-gath" : access == engine::KvAccess::automatic ? row.mode : "kv-inpl", ratio, options.steps, [&] {
              engine::ReplayRouter router(capture, mask, kind, use_cache, steps, device, engine::kDefaultPrefetchDepth,
                                          access);
              denoise(model, work, [&](FluxRequest& request, int step) {
                router.set_step(step);
                request.router = &router;
                request.carried_rows = router.carried_rows();
              });
              loader_wait = router.stats().load_wait_seconds;
            });
            profile["ideal_speedup"] = row.ideal_speedup;
            profile["loader_wait_ms_per_step"] = 1e3 * loader_wait / options.steps;
            report.extra["phase_profile"][dtype_name].push_back(profile);
          }
        }
        tick();
      }
    }
    const engine::DeviceSpeed speed = estimator.speed();
    report.extra["speed_estimate"][dtype_name] = {{"gflops_per_second", speed.flops_per_second / 1e9},
                                                  {"fixed_ms_per_block", speed.fixed_seconds_per_block * 1e3},
                                                  {"load_gb_per_second", speed.load_bytes_per_second / 1e9},
                                                  {"fixed_ms_per_load", speed.fixed_seconds_per_load * 1e3}};

    // Fidelity: an edit whose input differs from the template only inside the mask (new noise
    // there), mask-aware vs full computation of that same edit, SSIM over the masked region of
    // the final latents (unpacked to [C, h, w]).
    const engine::TokenMask mask = blob_mask(options.grid, 0.2);
    Workload edit = work;
    edit.latents = work.latents.clone();
    edit.latents.index_copy_(0, mask.masked_rows.to(device),
                             at::randn({mask.masked_count(), latent_channels}, at::detail::createCPUGenerator(options.seed + 7))
                                 .to(device));
    const at::Tensor reference = denoise(model, edit, nullptr);
    at::Tensor region = mask.masked.to(at::kFloat).view({options.grid, options.grid}).to(device);
    region = region.repeat_interleave(2, 0).repeat_interleave(2, 1);
    auto unpacked = [&](const at::Tensor& packed) { return unpack_latents(packed, options.grid * 2, options.grid * 2); };
    const double range = (reference.max() - reference.min()).item<double>();
    for (engine::CacheMode kind : {engine::CacheMode::kv, engine::CacheMode::hidden}) {
      engine::ReplayRouter router(capture, mask, kind, std::vector<bool>(config.block_count(), true), steps, device);
      const at::Tensor approximate = denoise(model, edit, [&](FluxRequest& request, int step) {
        router.set_step(step);
        request.router = &router;
        request.carried_rows = router.carried_rows();
      });
      report.extra["fidelity_m0.2"][dtype_name][engine::cache_mode_name(kind)] = {
          {"latent_ssim_masked_region", ssim(unpacked(approximate), unpacked(reference), range, region)},
          {"latent_psnr_masked_region", psnr(unpacked(approximate), unpacked(reference), range, region)}};
    }
    (void)template_result;
  }
  return report;
}

nlohmann::json EditBenchmarkReport::to_json() const {
  nlohmann::json rows_json = nlohmann::json::array();
  for (const auto& row : rows)
    rows_json.push_back({{"mode", row.mode},
                         {"mask_ratio", row.mask_ratio},
                         {"dtype", row.dtype},
                         {"seconds", row.seconds},
                         {"predicted_seconds", row.predicted_seconds},
                         {"speedup", row.speedup},
                         {"ideal_speedup", row.ideal_speedup},
                         {"efficiency", row.speedup / row.ideal_speedup},
                         {"cache_bytes", row.cache_bytes},
                         {"blocks_from_cache", row.blocks_from_cache},
                         {"load_wait_seconds", row.load_wait_seconds}});
  return {{"config", config}, {"rows", rows_json}, {"extra", extra}};
}

std::string EditBenchmarkReport::table() const {
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof(line), "%-7s %-5s %6s %9s %9s %6s %8s %8s %6s %12s %8s\n", "mode", "dtype", "m",
                "seconds", "predicted", "error", "speedup", "ideal", "eff.", "cache bytes", "wait s");
  out << line;
  for (const auto& row : rows) {
    std::snprintf(line, sizeof(line), "%-7s %-5s %6.2f %9.3f %9.3f %+5.0f%% %7.2fx %7.2fx %5.0f%% %12lld %8.3f\n",
                  row.mode.c_str(), row.dtype.c_str(), row.mask_ratio, row.seconds, row.predicted_seconds,
                  100 * (row.predicted_seconds / row.seconds - 1), row.speedup,
                  row.ideal_speedup, 100 * row.speedup / row.ideal_speedup,
                  static_cast<long long>(row.cache_bytes), row.load_wait_seconds);
    out << line;
  }
  return out.str();
}

std::string EditBenchmarkReport::phase_table() const {
  if (!extra.contains("phase_profile")) return {};
  std::ostringstream out;
  char cell[64];
  for (const auto& [dtype, runs] : extra["phase_profile"].items()) {
    out << "where a step's time goes (" << dtype << ", ms per step; ideal: the full run's phase time / the "
        << "row's ideal speedup)\n";
    std::snprintf(cell, sizeof(cell), "%-18s", "phase");
    out << cell;
    for (const auto& run : runs) {
      std::snprintf(cell, sizeof(cell), " %8s %4.2f", run["mode"].get<std::string>().c_str(), run["mask_ratio"].get<double>());
      out << cell;
    }
    out << "\n";
    std::vector<std::string> names;  // the phases any run recorded, in the profiler's order
    for (int p = 0; p < kPhaseCount; ++p) {
      const std::string name = phase_name(static_cast<Phase>(p));
      for (const auto& run : runs)
        if (run["phases"].contains(name)) {
          names.push_back(name);
          break;
        }
    }
    names.push_back("outside the model");
    for (const std::string& name : names) {
      std::snprintf(cell, sizeof(cell), "%-18s", name.c_str());
      out << cell;
      for (const auto& run : runs) {
        std::snprintf(cell, sizeof(cell), " %13.2f", run["phases"].value(name, 0.0));
        out << cell;
      }
      out << "\n";
    }
    std::snprintf(cell, sizeof(cell), "%-18s", "step");
    out << cell;
    for (const auto& run : runs) {
      std::snprintf(cell, sizeof(cell), " %13.2f", run["ms_per_step"].get<double>());
      out << cell;
    }
    out << "\n";
    std::snprintf(cell, sizeof(cell), "%-18s", "ideal step");
    out << cell;
    const double full_ms = runs.front()["ms_per_step"].get<double>();
    for (const auto& run : runs) {
      std::snprintf(cell, sizeof(cell), " %13.2f", full_ms / run.value("ideal_speedup", 1.0));
      out << cell;
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace flashps::bench
