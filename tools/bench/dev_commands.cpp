// `flashps-bench dev run-fixture DIR` (also `flashps dev ...`): runs any golden fixture folder and prints per-case
// errors. `dev random-model DIR`: writes a small random-weight Flux Fill folder (with --text-encoders, the complete
// diffusers layout a FLUX.1-Fill download has), for trying the prompt path and front ends without a real model.
// `dev random-model OUT --preset P --format F --quant Q`: a model of a real size in the layouts users keep
// (models/random/random_checkpoint.h), streamed to disk; Ctrl-C stops it and removes the partial output.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "bench/edit_benchmark.h"
#include "core/diagnostics/error.h"
#include "developer_commands.h"
#include "dev/fixture_set.h"
#include "models/random/random_checkpoint.h"
#include "models/random/random_model.h"

namespace flashps::bench_tool {
namespace {

std::atomic<bool> random_model_interrupted{false};

void stop_random_model(int) { random_model_interrupted = true; }

RandomModelPreset named_preset(const std::string& name) {
  if (name == "flux-fill-dev") return flux_fill_dev_preset();
  if (name == "flux-fill-bench") return small_flux_fill_preset(name, bench::reference_bench_config());
  if (name == "sd15-inpaint") return sd15_inpaint_preset();
  if (name == "sdxl") return sdxl_preset();
  throw InvalidArgumentError("--preset: unknown preset '" + name + "' (flux-fill-dev, flux-fill-bench, sd15-inpaint, sdxl)");
}

int write_preset_model(const std::string& out, const std::string& preset, const std::string& format,
                       const std::string& quant, const std::string& text_quant, uint64_t seed) {
  RandomCheckpointRequest request;
  request.preset = named_preset(preset);
  request.format = random_model_format(format);
  request.quant = quant;
  request.text_encoder_quant = text_quant;
  request.seed = seed;
  request.progress = [](const std::string& line) { std::cerr << line << std::endl; };
  request.cancel = &random_model_interrupted;
  std::signal(SIGINT, stop_random_model);
  std::signal(SIGTERM, stop_random_model);
  try {
    const RandomCheckpointResult result = write_random_checkpoint(out, request);
    std::cout << "wrote " << out << ": " << result.files.size() << " files, " << result.bytes << " bytes, "
              << result.parameters << " parameters\n";
    return 0;
  } catch (const Cancelled&) {
    std::cerr << "flashps: interrupted; the partial output was removed\n";
    return 130;
  } catch (const InvalidArgumentError& error) {
    std::cerr << "flashps: " << error.what() << "\n";
    return 2;
  }
}

}  // namespace

void add_dev_commands(CLI::App& app, CommandAction& action) {
  CLI::App* dev = app.add_subcommand("dev", "Developer tools");
  dev->require_subcommand(1);

  CLI::App* random_model = dev->add_subcommand(
      "random-model", "Write a small Flux Fill folder with seeded random weights (for tests, not for real edits)");
  static std::string random_dir;
  static bool text_encoders = false;
  static uint64_t random_seed = 0;
  static int max_sequence_length = 32;
  static std::string preset, format = "folder", quant = "f32", text_quant;
  random_model->add_option("dir", random_dir, "Folder (or, with --format single-file, .safetensors file) to create; must not exist")->required();
  random_model->add_option("--preset", preset,
                           "flux-fill-dev (FLUX.1-Fill-dev's sizes: 12B transformer, T5-XXL, CLIP-L, Flux VAE) or "
                           "flux-fill-bench (`bench edit`'s Flux config) sd15-inpaint (SD 1.5 inpainting's sizes) or sdxl "
                           "(SDXL base 1.0's; SD presets: folder or single-file); without it the small Fill folder");
  random_model->add_option("--format", format, "With --preset: folder, single-file or gguf")->capture_default_str();
  random_model->add_option("--quant", quant,
                           "With --preset: the transformer's weights: f32 f16 bf16 fp8; gguf also q8_0 q4_0 q4_1 q5_0 "
                           "q5_1 q4_k q5_k q6_k")->capture_default_str();
  random_model->add_option("--text-encoder-quant", text_quant, "With --preset: T5's weights (f32 f16 bf16 fp8)");
  random_model->add_flag("--text-encoders", text_encoders,
                         "Also write text_encoder, tokenizer, text_encoder_2 (sharded) and tokenizer_2, so the folder "
                         "edits from --prompt");
  random_model->add_option("--seed", random_seed, "Seed of the weights");
  random_model->add_option("--max-sequence-length", max_sequence_length, "T5 tokens per prompt (1-512)")
      ->check(CLI::Range(1, 512));
  random_model->callback([&action] {
    action = [] {
      if (!preset.empty()) return write_preset_model(random_dir, preset, format, quant, text_quant, random_seed);
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
