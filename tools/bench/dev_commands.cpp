// `flashps-bench dev run-fixture DIR` (also `flashps dev ...`): runs any golden fixture folder and prints per-case
// errors. `dev random-model DIR`: writes a small random-weight Flux Fill folder (with --text-encoders, the complete
// diffusers layout a FLUX.1-Fill download has), for trying the prompt path and front ends without a real model.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "developer_commands.h"
#include "dev/fixture_set.h"
#include "models/random/random_model.h"

namespace flashps::bench_tool {

void add_dev_commands(CLI::App& app, CommandAction& action) {
  CLI::App* dev = app.add_subcommand("dev", "Developer tools");
  dev->require_subcommand(1);

  CLI::App* random_model = dev->add_subcommand(
      "random-model", "Write a small Flux Fill folder with seeded random weights (for tests, not for real edits)");
  static std::string random_dir;
  static bool text_encoders = false;
  static uint64_t random_seed = 0;
  static int max_sequence_length = 32;
  random_model->add_option("dir", random_dir, "Folder to create (must not exist)")->required();
  random_model->add_flag("--text-encoders", text_encoders,
                         "Also write text_encoder, tokenizer, text_encoder_2 (sharded) and tokenizer_2, so the folder "
                         "edits from --prompt");
  random_model->add_option("--seed", random_seed, "Seed of the weights");
  random_model->add_option("--max-sequence-length", max_sequence_length, "T5 tokens per prompt (1-512)")
      ->check(CLI::Range(1, 512));
  random_model->callback([&action] {
    action = [] {
      if (std::filesystem::exists(random_dir)) {
        std::cerr << "flashps: " << random_dir << " already exists; give a new folder\n";
        return 1;
      }
      RandomFluxModelSpec spec = small_fill_model_spec();
      spec.seed = random_seed;
      spec.text_encoders = text_encoders;
      spec.max_sequence_length = max_sequence_length;
      write_random_flux_model(random_dir, spec);
      std::cout << "wrote " << random_dir << (text_encoders ? " (with text encoders)" : "") << "\n";
      return 0;
    };
  });
  CLI::App* run_fixture = dev->add_subcommand(
      "run-fixture", "Run a golden fixture folder (cases.json format) and compare every output");
  static std::string fixture_dir;
  run_fixture->add_option("dir", fixture_dir, "Fixture folder")->required();
  run_fixture->callback([&action] {
    action = [] {
      dev::FixtureReport report = dev::run_fixture(fixture_dir);
      std::cout << report.component << " (" << report.dir << ")\n";
      if (!report.skipped.empty()) {
        std::cout << "SKIP: " << report.skipped << "\n";
        return 0;
      }
      for (const auto& result : report.cases) {
        if (!result.error.empty()) {
          std::cout << "  " << result.name << ": ERROR " << result.error << "\n";
          continue;
        }
        for (const auto& output : result.outputs) {
          std::printf("  %-28s %-22s max_abs_err %.3g  (%.2f of tolerance)  %s\n",
                      result.name.c_str(), output.output.c_str(), output.max_abs_error,
                      output.worst_ratio, output.passed ? "PASS" : "FAIL");
        }
      }
      const bool passed = report.passed();
      std::cout << (passed ? "PASS" : "FAIL") << ": " << report.cases.size() << " cases\n";
      return passed ? 0 : 1;
    };
  });
}

}  // namespace flashps::bench_tool
