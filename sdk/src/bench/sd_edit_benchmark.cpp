#include "bench/sd_edit_benchmark.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <cstdio>
#include <sstream>

#include "bench/bench_support.h"
#include "core/kernels/dnnl_matmul.h"
#include "core/diagnostics/error.h"
#include "core/image/image.h"
#include "core/metrics/image_metrics.h"
#include "core/diagnostics/phase_profile.h"
#include "core/runtime/runtime.h"
#include "engine/capture_router.h"
#include "engine/planner.h"
#include "engine/replay_router.h"
#include "models/common/image_layers.h"
#include "models/common/layers.h"
#include "models/random/random_weights.h"
#include "models/unet/resnet_tiles.h"
#include "models/unet/unet_block_work.h"
#include "models/unet/unet_model.h"
#include "models/vae/autoencoder_kl.h"
#include "pipeline/image_tensors.h"

namespace flashps::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Workload {
  at::Tensor latents, conditioning, context;  // [1, 4, h, w], [1, 5, h, w] (inpainting UNets), [2, 77, D]
  at::Tensor text_embeds, time_ids;           // SDXL's added conditions, [2, D] and [2, 6]
  int steps = 2;
};

struct LoopTimes {
  at::Tensor latents;
  double transformer_seconds = 0;
};

// Guided denoising with a simple Euler-style update; `route` attaches a router per step.
LoopTimes denoise(const UNet2DConditionModel& model, const Workload& work,
                  const std::function<unet::UNetRouting*(int)>& route) {
  LoopTimes times;
  at::Tensor latents = work.latents.clone();
  for (int step = 0; step < work.steps; ++step) {
    UNetInputs inputs;
    inputs.sample = (work.conditioning.defined() ? at::cat({latents, work.conditioning}, 1) : latents)
                        .expand({2, -1, -1, -1})
                        .contiguous();
    inputs.text_embeds = work.text_embeds;
    inputs.time_ids = work.time_ids;
    inputs.timestep = at::full({2}, 999.0 - 998.0 * step / std::max(1, work.steps - 1));
    inputs.encoder_hidden_states = work.context;
    inputs.routing = route ? route(step) : nullptr;
    inputs.transformer_seconds = &times.transformer_seconds;
    const at::Tensor output = model->forward(inputs);
    const at::Tensor guided = output[0] + 7.5 * (output[1] - output[0]);
    latents = latents - 0.1 * guided.unsqueeze(0);
  }
  times.latents = latents;
  return times;
}

int64_t parameter_count(const torch::nn::Module& module) {
  int64_t count = 0;
  for (const auto& parameter : module.parameters()) count += parameter.numel();
  return count;
}

nlohmann::json sd_vae_config() {
  return {{"in_channels", 3}, {"out_channels", 3}, {"block_out_channels", {128, 256, 512, 512}},
          {"layers_per_block", 2}, {"latent_channels", 4}, {"norm_num_groups", 32}, {"scaling_factor", 0.18215}};
}

// Every .jpg/.png photo in `dir` (sorted by name; none when the folder does not exist), centre-
// cropped to a square and resized to `size`: [1, 3, size, size] in [-1, 1].
std::vector<at::Tensor> photos_at_size(const std::string& dir, int64_t size) {
  namespace fs = std::filesystem;
  std::vector<std::string> paths;
  if (dir.empty() || !fs::is_directory(dir)) return {};
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string extension = entry.path().extension().string();
    if (extension == ".jpg" || extension == ".jpeg" || extension == ".png") paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<at::Tensor> photos;
  for (const std::string& path : paths) {
    const at::Tensor image = image_to_tensor(to_rgb(read_image(path)));
    const int64_t side = std::min(image.size(1), image.size(2));
    const at::Tensor square = image.narrow(1, (image.size(1) - side) / 2, side).narrow(2, (image.size(2) - side) / 2, side);
    photos.push_back(at::upsample_bilinear2d(square.unsqueeze(0), {size, size}, false));
  }
  return photos;
}

// One decode under the phase profiler: milliseconds per phase, and the convolutions' counted
// GFLOP and the rate they ran at.
nlohmann::json profiled_decode(const AutoencoderKL& vae, const at::Tensor& latents) {
  PhaseTotals totals;
  const auto start = std::chrono::steady_clock::now();
  {
    PhaseRecording recording(&totals);
    vae.decode_latents(latents);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int convolution = static_cast<int>(Phase::convolution), group_norm = static_cast<int>(Phase::group_norm);
  return {{"seconds", seconds},
          {"convolution_seconds", totals.seconds[convolution]},
          {"convolution_gflop", totals.flops[convolution] / 1e9},
          {"convolution_gflops_per_second", totals.flops[convolution] / 1e9 / totals.seconds[convolution]},
          {"group_norm_seconds", totals.seconds[group_norm]},
          {"rest_seconds", seconds - totals.seconds[convolution] - totals.seconds[group_norm]}};
}

// The SD decoder's 3x3 convolution at each level (channels, side), alone on channels-last
// activations as the decoder runs them: the kernel's own rate, fastest of two after a warm-up.
nlohmann::json decoder_convolutions_alone(at::ScalarType dtype, int64_t image_size) {
  nlohmann::json rates = nlohmann::json::array();
  const std::pair<int64_t, int64_t> levels[] = {{512, image_size / 8}, {512, image_size / 4},
                                                {256, image_size / 2}, {128, image_size}};
  for (const auto& [channels, side] : levels) {
    Conv2dLayer conv(channels, channels, 3, 1, 1);
    fill_random_weights(conv, 7);
    conv.to(dtype);
    const at::Tensor input = at::randn({1, channels, side, side}).to(dtype).contiguous(at::MemoryFormat::ChannelsLast);
    conv.forward(input);
    const double seconds = fastest_of(2, [&] { conv.forward(input); });
    const double gflop = 2.0 * double(channels * channels * 9 * side * side) / 1e9;
    rates.push_back({{"channels", channels}, {"side", side}, {"gflop", gflop}, {"seconds", seconds},
                     {"gflops_per_second", gflop / seconds}});
  }
  return rates;
}

}  // namespace

UNetConfig sd_bench_unet_config(const std::string& name) {
  nlohmann::json config = {{"in_channels", 9},
                           {"out_channels", 4},
                           {"down_block_types", {"CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"}},
                           {"up_block_types", {"UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"}},
                           {"block_out_channels", {320, 640, 1280, 1280}},
                           {"layers_per_block", 2},
                           {"norm_num_groups", 32}};
  if (name == "sd2-inpaint") {
    config["attention_head_dim"] = {5, 10, 20, 20};
    config["cross_attention_dim"] = 1024;
    config["use_linear_projection"] = true;
  } else if (name == "sd15-inpaint") {
    config["attention_head_dim"] = 8;
    config["cross_attention_dim"] = 768;
  } else {
    throw Error("unknown benchmark UNet config '" + name + "' (sd2-inpaint or sd15-inpaint)");
  }
  return parse_unet_config(config, name);
}

SDEditBenchmarkReport run_sd_edit_benchmark(const SDEditBenchmarkOptions& options) {
  at::NoGradGuard no_grad;
  if (options.size % 64) throw Error("bench edit --family sd: --size must be a multiple of 64");
  SDEditBenchmarkReport report;
  const bool fixed_weights = !options.unet_dir.empty();
  UNet2DConditionModel model = fixed_weights ? load_unet(options.unet_dir) : UNet2DConditionModel(sd_bench_unet_config(options.config));
  if (!fixed_weights) fill_random_weights(*model, options.seed + 1);
  const UNetConfig config = model->config();
  const int64_t grid = options.size / 8;
  if (config.in_channels != 9 && config.in_channels != 4)
    throw Error("bench edit --family sd: " + options.unet_dir + ": expected a UNet with 9 (inpainting) or 4 input channels, got " +
                std::to_string(config.in_channels));
  report.config = {{"unet", fixed_weights ? options.unet_dir : options.config},
                   {"parameters", parameter_count(*model)},
                   {"size", options.size},
                   {"latent_grid", grid},
                   {"steps", options.steps},
                   {"guidance_batch", 2},
                   {"threads", runtime_threads()},
                   {"planner", options.use_planner}};

  {  // the cost model's count, to read timings as achieved FLOP/s
    std::vector<engine::TokenCounts> counts;
    for (const auto& block : unet_routed_blocks(config)) {  // a moments block's rows are tiles
      const int64_t side = grid >> block.level, tile = unet::resnet_tile_side(side, side);
      const int64_t pixels = 2 * side * side;
      counts.push_back({0, block.kind != UNetBlockShape::Kind::resnet_moments ? pixels : tile > 0 ? pixels / (tile * tile) : 2, 0});
    }
    const double flops = engine::forward_flops(unet_block_work(config, 77, 4, grid), counts) +
                         unet_dense_flops_per_latent_token(config) * double(2 * grid * grid);
    report.config["gflop_per_step_cost_model"] = flops / 1e9;
  }
  auto generator = at::detail::createCPUGenerator(options.seed);
  Workload work;
  work.steps = options.steps;
  work.latents = at::randn({1, 4, grid, grid}, generator);
  if (config.in_channels == 9) work.conditioning = at::randn({1, 5, grid, grid}, generator);
  work.context = at::randn({2, 77, config.cross_attention_dim}, generator);
  if (config.addition_time_embed_dim > 0) {  // SDXL: a pooled text embedding and 6 micro-conditions
    const int64_t time_ids = 6;
    work.text_embeds = at::randn({2, config.projection_class_embeddings_input_dim - time_ids * config.addition_time_embed_dim}, generator);
    work.time_ids = at::tensor({double(options.size), double(options.size), 0.0, 0.0, double(options.size), double(options.size)})
                        .to(at::kFloat)
                        .expand({2, time_ids})
                        .contiguous();
  }

  int done = 0;
  const int total = int(options.dtypes.size() * (2 + options.mask_ratios.size()) + (options.time_vae && !fixed_weights ? 1 : 0));
  auto tick = [&] { report_progress(options.progress, {"bench", ++done, total, 0}); };

  for (const std::string& dtype_name : options.dtypes) {
    model->to(dtype_name == "bf16" ? at::kBFloat16 : at::kFloat);
    prefer_fast_linear_layout(*model);
    // One warm-up step at full size: first touch of buffers and kernels.
    Workload warm = work;
    warm.steps = 1;
    denoise(model, warm, nullptr);
    LoopTimes full;
    const double full_seconds = fastest_of(1, [&] { full = denoise(model, work, nullptr); });
    report.rows.push_back({"full", 1.0, dtype_name, full_seconds, full.transformer_seconds, 1, 1, 0, 0, 0, 0});
    if (dtype_name == "bf16") {  // side by side: without oneDNN's bf16 products (core/kernels/dnnl_matmul.h)
      set_dnnl_bf16_linear_enabled(false);
      LoopTimes without;
      const double seconds = fastest_of(1, [&] { without = denoise(model, work, nullptr); });
      set_dnnl_bf16_linear_enabled(true);
      report.extra["full_bf16_without_onednn_bf16_products"] = {{"seconds", seconds},
                                                                {"transformer_seconds", without.transformer_seconds}};
    }
    report.extra["achieved_gflop_per_second_full"][dtype_name] =
        report.config["gflop_per_step_cost_model"].get<double>() * options.steps / full_seconds;
    tick();

    // Registration: the same loop capturing every transformer block's output.
    engine::MemoryCaptureStore store;
    auto writer = store.begin({"bench-template", dtype_name, "bench"});
    engine::CaptureRouter capture_router(*writer, false, true, model->dtype());
    unet::UNetRouting capture_routing;
    capture_routing.requests.push_back({0, 2, &capture_router});
    const auto capture_start = Clock::now();
    denoise(model, work, [&](int step) {
      capture_router.set_step(step);
      return &capture_routing;
    });
    auto capture = writer->commit();
    report.extra["capture"][dtype_name] = {
        {"bytes", capture->bytes()},
        {"seconds", std::chrono::duration<double>(Clock::now() - capture_start).count()}};
    tick();

    const auto block_work = unet_block_work(config, 77, c10::elementSize(model->dtype()), grid);
    std::vector<int> steps;
    for (int i = 0; i < options.steps; ++i) steps.push_back(i);
    for (double ratio : options.mask_ratios) {
      const auto masks = unet_block_masks(config, blob_mask(grid, ratio), 2);
      std::vector<engine::TokenCounts> counts;
      for (const auto& mask : masks) counts.push_back({0, mask.token_count(), mask.masked_count()});
      // The device's speed from the full run (routed blocks and the dense rest), for the planner.
      engine::DeviceSpeed speed;
      std::vector<engine::TokenCounts> all_rows;
      for (const auto& mask : masks) all_rows.push_back({0, mask.token_count(), mask.token_count()});
      speed.flops_per_second = (engine::forward_flops(block_work, all_rows) +
                                unet_dense_flops_per_latent_token(config) * double(2 * grid * grid)) *
                               options.steps / full_seconds;
      std::vector<bool> use_cache(masks.size(), true);
      if (options.use_planner)
        use_cache = engine::plan_pipeline(engine::estimate_block_times(block_work, counts, engine::CacheMode::hidden, speed)).use_cache;
      engine::ReplayRouter replay(capture, masks, use_cache, steps, at::Device(at::kCPU));
      unet::UNetRouting routing;
      routing.requests.push_back({0, 2, &replay});
      LoopTimes edited;
      const double seconds = fastest_of(1, [&] {
        edited = denoise(model, work, [&](int step) {
          replay.set_step(step);
          return &routing;
        });
      });
      const engine::ReplayStats& stats = replay.stats();
      SDEditBenchmarkRow row;
      row.mode = "hidden";
      row.mask_ratio = ratio;
      row.dtype = dtype_name;
      row.seconds = seconds;
      row.transformer_seconds = edited.transformer_seconds;
      row.speedup = full_seconds / seconds;
      row.ideal_speedup = engine::forward_flops(block_work, counts) / engine::forward_flops(block_work, counts, engine::CacheMode::hidden);
      row.blocks_from_cache = stats.blocks_from_cache;
      row.blocks_computed = stats.blocks_computed;
      row.cache_bytes = stats.bytes_loaded;
      row.load_wait_seconds = stats.load_wait_seconds;
      report.rows.push_back(row);
      tick();
    }
    {  // Fidelity at m = 0.2: an edit with new noise inside the mask, mask-aware (every block
       // from the template's capture, tiled ResNets included) vs full computation of that edit.
      const engine::TokenMask mask = blob_mask(grid, 0.2);
      const at::Tensor region = mask.masked.to(at::kFloat).view({1, 1, grid, grid});
      Workload edit = work;
      auto noise_generator = at::detail::createCPUGenerator(options.seed + 7);
      edit.latents = work.latents * (1 - region) + at::randn(work.latents.sizes(), noise_generator) * region;
      const at::Tensor reference = denoise(model, edit, nullptr).latents[0];
      const auto masks = unet_block_masks(config, mask, 2);
      const double range = (reference.max() - reference.min()).item<double>();
      const at::Tensor masked_region = region.view({grid, grid});
      // Every block from the cache, and the transformer blocks alone (ResNets dense, as before
      // tiled ResNets): what the ResNets' approximation adds.
      const auto blocks = unet_routed_blocks(config);
      std::vector<bool> transformers_only(blocks.size());
      for (size_t b = 0; b < blocks.size(); ++b) transformers_only[b] = blocks[b].kind == UNetBlockShape::Kind::transformer;
      for (const auto& [name, use_cache] : {std::make_pair(std::string("all_blocks"), std::vector<bool>(masks.size(), true)),
                                            std::make_pair(std::string("transformers_only"), transformers_only)}) {
        engine::ReplayRouter replay(capture, masks, use_cache, steps, at::Device(at::kCPU));
        unet::UNetRouting routing;
        routing.requests.push_back({0, 2, &replay});
        const at::Tensor approximate = denoise(model, edit, [&](int step) {
                                         replay.set_step(step);
                                         return &routing;
                                       }).latents[0];
        report.extra["fidelity_m0.2"][dtype_name][name] = {
            {"latent_ssim_masked_region", ssim(approximate, reference, range, masked_region)},
            {"latent_psnr_masked_region", psnr(approximate, reference, range, masked_region)}};
      }
    }
  }

  if (options.time_vae && !fixed_weights) {
    AutoencoderKL vae(parse_autoencoder_kl_config(sd_vae_config(), "SD VAE"));
    fill_random_weights(vae, options.seed + 2);
    const at::Tensor latents = at::randn({1, 4, grid, grid}, generator);
    vae.decode_latents(latents);  // warm-up
    const double decode = fastest_of(1, [&] { vae.decode_latents(latents); });
    const at::Tensor image = at::rand({1, 3, options.size, options.size}, generator) * 2 - 1;
    const double encode = fastest_of(1, [&] { vae.encode_to_latents(image); });
    report.extra["vae_fp32"] = {{"decode_seconds", decode}, {"encode_seconds", encode}, {"parameters", parameter_count(vae)}};
    // The same VAE in bf16, side by side: time, and how far its decode is from float32's.
    const std::vector<at::Tensor> photos = photos_at_size(options.photos_dir, options.size);
    std::vector<at::Tensor> photo_round_trips;  // float32 encode + decode of each photo
    for (const at::Tensor& photo : photos) photo_round_trips.push_back(vae.decode_latents(vae.encode_to_latents(photo)));
    const at::Tensor reference = vae.decode_latents(latents);
    const double range = (reference.max() - reference.min()).item<double>();
    // Tiled decode forced at this size (256-pixel tiles, 64 pixels of overlap), as images above
    // 1024 pixels are decoded: its cost, and how far the blended tiles are from the whole decode.
    const DecodeTiling tiling{grid / 2, grid / 8, 0};
    vae.set_decode_tiling(tiling);
    at::Tensor decoded_tiled;
    const double decode_tiled_seconds = fastest_of(1, [&] { decoded_tiled = vae.decode_latents(latents); });
    vae.set_decode_tiling(DecodeTiling{});
    report.extra["vae_fp32_tiled"] = {{"tile_latent_pixels", tiling.tile},
                                      {"overlap_latent_pixels", tiling.overlap},
                                      {"tiles", tile_starts(grid, tiling.tile, tiling.overlap).size() *
                                                    tile_starts(grid, tiling.tile, tiling.overlap).size()},
                                      {"decode_seconds", decode_tiled_seconds},
                                      {"decode_psnr_vs_whole_db", psnr(decoded_tiled[0], reference[0], range)}};
    vae.to(at::kBFloat16);
    vae.decode_latents(latents);  // warm-up
    at::Tensor decoded_bf16;
    const double decode_bf16 = fastest_of(1, [&] { decoded_bf16 = vae.decode_latents(latents); });
    const double encode_bf16 = fastest_of(1, [&] { vae.encode_to_latents(image); });
    report.extra["vae_bf16"] = {{"decode_seconds", decode_bf16},
                                {"encode_seconds", encode_bf16},
                                {"decode_psnr_vs_fp32_db", psnr(decoded_bf16[0], reference[0], range)}};
    for (size_t p = 0; p < photos.size(); ++p) {  // bf16 encode + decode against float32's
      const at::Tensor round_trip = vae.decode_latents(vae.encode_to_latents(photos[p]));
      const double photo_range = (photo_round_trips[p].max() - photo_round_trips[p].min()).item<double>();
      report.extra["vae_bf16"]["photo_round_trip_psnr_vs_fp32_db"].push_back(psnr(round_trip[0], photo_round_trips[p][0], photo_range));
    }
    if (options.phase_profile) {
      for (const char* dtype_name : {"fp32", "bf16"}) {
        const at::ScalarType dtype = std::string(dtype_name) == "bf16" ? at::kBFloat16 : at::kFloat;
        vae.to(dtype);
        report.extra["vae_decode_profile"][dtype_name] = profiled_decode(vae, latents);
        report.extra["vae_convolutions_alone"][dtype_name] = decoder_convolutions_alone(dtype, options.size);
      }
    }
    tick();
  }
  return report;
}

nlohmann::json SDEditBenchmarkReport::to_json() const {
  nlohmann::json rows_json = nlohmann::json::array();
  for (const auto& row : rows)
    rows_json.push_back({{"mode", row.mode},
                         {"mask_ratio", row.mask_ratio},
                         {"dtype", row.dtype},
                         {"seconds", row.seconds},
                         {"transformer_seconds", row.transformer_seconds},
                         {"other_seconds", row.seconds - row.transformer_seconds},
                         {"speedup", row.speedup},
                         {"ideal_block_speedup", row.ideal_speedup},
                         {"blocks_from_cache", row.blocks_from_cache},
                         {"blocks_computed", row.blocks_computed},
                         {"cache_bytes", row.cache_bytes},
                         {"load_wait_seconds", row.load_wait_seconds}});
  return {{"config", config}, {"rows", rows_json}, {"extra", extra}};
}

std::string SDEditBenchmarkReport::table() const {
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof(line), "%-7s %-5s %5s %9s %12s %10s %8s %9s %7s %8s\n", "mode", "dtype", "m", "seconds",
                "transformer", "resnets+", "speedup", "bl.ideal", "cached", "wait s");
  out << line;
  for (const auto& row : rows) {
    std::snprintf(line, sizeof(line), "%-7s %-5s %5.2f %9.2f %12.2f %10.2f %7.2fx %8.2fx %3d/%-3d %8.3f\n",
                  row.mode.c_str(), row.dtype.c_str(), row.mask_ratio, row.seconds, row.transformer_seconds,
                  row.seconds - row.transformer_seconds, row.speedup, row.ideal_speedup, row.blocks_from_cache,
                  row.blocks_from_cache + row.blocks_computed, row.load_wait_seconds);
    out << line;
  }
  return out.str();
}

}  // namespace flashps::bench
