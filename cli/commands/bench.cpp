// `flashps bench edit`: the mask-aware engine benchmark (logic in sdk/src/bench).
#include <fstream>
#include <iostream>

#include "bench/edit_benchmark.h"
#include "commands.h"
#include "core/error.h"
#include "terminal_progress.h"

namespace flashps::cli {

void add_bench_commands(CLI::App& app, CommandAction& action) {
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks (timings measured side by side in one run)");
  bench->require_subcommand(1);
  static bench::EditBenchmarkOptions options;
  static std::string json_path;
  static bool quiet = false;
  options.model = bench::reference_bench_config();
  CLI::App* edit = bench->add_subcommand("edit", "Full vs mask-aware (kv, hidden) editing on a random-weight Flux transformer");
  edit->add_option("--steps", options.steps, "Denoising steps")->capture_default_str();
  edit->add_option("--grid", options.grid, "Image token grid side (tokens = grid^2)")->capture_default_str();
  edit->add_option("--text-tokens", options.text_tokens, "Text tokens")->capture_default_str();
  edit->add_option("--ratios", options.mask_ratios, "Mask ratios");
  edit->add_option("--dtypes", options.dtypes, "fp32 and/or bf16")->check(CLI::IsMember({"fp32", "bf16"}));
  edit->add_option("--repeats", options.repeats, "Timed runs per row (fastest reported)")->capture_default_str();
  edit->add_option("--double-blocks", options.model.num_layers, "Double-stream blocks")->capture_default_str();
  edit->add_option("--single-blocks", options.model.num_single_layers, "Single-stream blocks")->capture_default_str();
  edit->add_option("--json", json_path, "Write the results as JSON to this file");
  edit->add_flag("--quiet,-q", quiet, "No progress bar");
  edit->callback([&action] {
    action = [] {
      options.progress = terminal_progress(quiet);
      bench::EditBenchmarkReport report = bench::run_edit_benchmark(options);
      finish_progress_line(quiet);
      std::cout << report.table();
      std::cout << report.extra.dump(2) << "\n";
      if (!json_path.empty()) {
        std::ofstream out(json_path);
        out << report.to_json().dump(2) << "\n";
        if (!out) throw Error(json_path + ": cannot write");
      }
      return 0;
    };
  });
}

}  // namespace flashps::cli
