// `flashps-bench profile` (also `flashps profile`): measures this machine with a model and fits
// the scheduler's latency models; the logic is in sdk/src/serve_tools.
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "developer_commands.h"
#include "pipeline/family_registry.h"
#include "serve_tools/device_profiler.h"

namespace flashps::bench_tool {

void add_profile_command(CLI::App& app, CommandAction& action) {
  static std::string model_option, dtype = "fp32", out = serve::default_profile_path();
  static int repeats = 3, co_runners = 0;
  static std::vector<int> sizes = serve::ProfileOptions().sizes, batch_sizes = serve::ProfileOptions().batch_sizes;
  static bool quiet = false;
  CLI::App* profile = app.add_subcommand(
      "profile", "Measure this machine with a model and fit the scheduler's latency models (with R²)");
  profile->add_option("--model", model_option, "Model folder (diffusers layout); default: bundled model");
  profile->add_option("--dtype", dtype, "Model precision: fp32 or bf16")
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->capture_default_str();
  profile->add_option("--out,-o", out, "Profile JSON to write (the default location is where edits and servers look for it)")->capture_default_str();
  profile->add_option("--repeats", repeats, "Timings per point (the fit takes the fastest; all are recorded)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  profile->add_option("--sizes", sizes, "Image sizes in pixels per side (the largest is the simulated request size)")
      ->capture_default_str()
      ->check(CLI::Range(16, 4096));
  profile->add_option("--batch-sizes", batch_sizes,
                      "Batch sizes to time (the simulator extrapolates beyond the largest: include the max batch "
                      "of the servers it stands for)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  profile->add_option("--co-runners", co_runners,
                      "Also time every step while N more workers of the model step beside it (workers sharing "
                      "this machine, e.g. bench serve --workers N+1); recorded for the simulator's measured truth")
      ->capture_default_str()
      ->check(CLI::Range(0, 64));
  profile->add_flag("--quiet,-q", quiet, "No progress bar");
  profile->callback([&action] {
    action = [] {
      // Any family; no store: profiling must not fill the user's activation store. Co-runners share
      // the weights, as an engine's workers on one device do.
      ModelLoadOptions load_options;
      load_options.dtype = dtype == "bf16" ? at::kBFloat16 : at::kFloat;
      const std::shared_ptr<InpaintModel> model = load_model(model_dir(model_option), load_options);
      auto pipeline = model->new_pipeline(nullptr);
      std::vector<std::unique_ptr<InpaintPipeline>> beside;
      serve::ProfileOptions profile_options;
      for (int i = 0; i < co_runners; ++i) {
        beside.push_back(model->new_pipeline(nullptr));
        profile_options.co_runners.push_back(beside.back().get());
      }
      profile_options.repeats = repeats;
      profile_options.sizes = sizes;
      profile_options.batch_sizes = batch_sizes;
      profile_options.progress = terminal_progress(quiet);
      const serve::ProfileReport report = serve::profile_device(*pipeline, profile_options);
      finish_progress_line(quiet);
      if (const auto folder = std::filesystem::path(out).parent_path(); !folder.empty())
        std::filesystem::create_directories(folder);
      serve::write_device_profile(report.profile, out);
      const serve::DeviceProfile& fitted = report.profile;
      std::printf("compute: %.3g s/GFLOP per block + %.3g ms per block (R² %.4f, %d batched steps)\n",
                  fitted.block_compute.slope * 1e9, fitted.block_compute.intercept * 1e3, fitted.block_compute.r2,
                  fitted.block_compute.samples);
      std::printf("loading: %.2f GB/s + %.3g ms per read (R² %.4f, %d reads)\n",
                  fitted.block_load.slope > 0 ? 1e-9 / fitted.block_load.slope : 0.0, fitted.block_load.intercept * 1e3,
                  fitted.block_load.r2, fitted.block_load.samples);
      std::printf("pre-processing %.1f ms, post-processing %.1f ms per request\n", fitted.preprocess_seconds * 1e3,
                  fitted.postprocess_seconds * 1e3);
      std::printf("recorded %zu measured steps (every repeat) for the simulator's measured ground truth\n",
                  fitted.measured_steps.size());
      if (fitted.co_runners > 0) {
        std::vector<double> ratios;
        for (const serve::MeasuredStep& step : fitted.measured_steps)
          ratios.push_back(serve::co_run_slowdown(step));
        std::sort(ratios.begin(), ratios.end());
        std::printf("with %d co-running worker(s) a step took %.2fx to %.2fx its time alone (median %.2fx)\n",
                    fitted.co_runners, ratios.front(), ratios.back(), ratios[ratios.size() / 2]);
      }
      std::printf("wrote %s\n", out.c_str());
      return 0;
    };
  });
}

}  // namespace flashps::bench_tool
