// `flashps bench text`: the T5 encoder (Flux's text_encoder_2) encoding one prompt of
// max_sequence_length tokens, at T5 v1.1 base and XXL shapes with random weights, in one run with
// this machine's GEMM rate for the same dtype (the ceiling the encoder is measured against):
// seconds, GFLOP/s, the fraction of the GEMM rate, and peak resident memory against the weights;
// optionally loading the model from a sharded checkpoint on disk, with its peak memory.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/diagnostics/progress.h"

namespace flashps::bench {

struct TextBenchmarkOptions {
  std::vector<std::string> shapes = {"base", "xxl"};  // T5 v1.1 base (d_model 768) and XXL (4096)
  std::vector<std::string> dtypes = {"bf16"};         // bf16 and/or fp32
  int tokens = 512;                                   // FluxPipeline's max_sequence_length
  int repeats = 3;                                    // the fastest encode is reported
  // Also write each model as a sharded checkpoint of `checkpoint_dtype` (as text_encoder_2/
  // ships) into `scratch_dir`, then time load_t5_encoder_model and its peak memory. Empty: no load.
  std::string scratch_dir;
  std::string checkpoint_dtype = "fp32";
  uint64_t seed = 0;
  ProgressCallback progress;
};

struct TextBenchmarkReport {
  nlohmann::json results;
  std::string table() const;
};

TextBenchmarkReport run_text_benchmark(const TextBenchmarkOptions& options);

}  // namespace flashps::bench
