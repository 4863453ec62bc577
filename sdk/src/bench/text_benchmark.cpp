#include "bench/text_benchmark.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <malloc.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "bench/bench_support.h"
#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "core/kernels/linear.h"
#include "core/files/tensor_io.h"
#include "models/t5/t5_encoder_model.h"

namespace flashps::bench {
namespace {

T5Config t5_shape(const std::string& name) {
  T5Config config;  // XXL by default (google/t5-v1_1-xxl, Flux's text_encoder_2)
  config.vocab_size = 32128;
  if (name == "xxl") return config;
  if (name == "base") {  // google/t5-v1_1-base
    config.d_model = 768;
    config.d_kv = 64;
    config.num_heads = 12;
    config.d_ff = 2048;
    config.num_layers = 12;
    return config;
  }
  throw InvalidArgumentError("bench text: shape '" + name + "' is not base or xxl");
}

at::ScalarType dtype_of(const std::string& name) {
  if (name == "bf16") return at::kBFloat16;
  if (name == "fp32") return at::kFloat;
  throw InvalidArgumentError("bench text: dtype '" + name + "' is not bf16 or fp32");
}

// A "Name:   N kB" field of /proc/self/status, in bytes (0 where absent).
int64_t status_bytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1)) * 1024;
  return 0;
}
int64_t resident_bytes() { return status_bytes("VmRSS"); }
// Peak resident memory since the last reset; the reset writes "5" to clear_refs, which Linux
// documents as resetting the peak.
int64_t peak_resident_bytes() { return status_bytes("VmHWM"); }
void reset_peak_resident() { std::ofstream("/proc/self/clear_refs") << "5"; }

// Weights straight in the target dtype, one tensor at a time (the module's float32 placeholders
// are never touched, so they take no memory): XXL in bfloat16 never needs its 19 GB float32 copy.
void fill_weights(T5EncoderModelImpl& model, at::ScalarType dtype, uint64_t seed) {
  at::NoGradGuard no_grad;
  auto generator = at::detail::createCPUGenerator(seed);
  for (auto& item : model.named_parameters(true)) {
    at::Tensor& parameter = item.value();
    const bool norm = item.key().find("layer_norm") != std::string::npos;
    const double scale = norm ? 0.1 : 1.0 / std::sqrt(static_cast<double>(parameter.size(-1)));
    at::Tensor value = at::empty(parameter.sizes(), at::TensorOptions().dtype(dtype));
    // Row blocks of 4M float32 values at a time: the largest tensor's float32 copy would be 0.5 GB.
    const int64_t rows = parameter.dim() == 2 ? parameter.size(0) : 1;
    const int64_t block = std::max<int64_t>(1, (int64_t(1) << 22) / std::max<int64_t>(1, parameter.numel() / rows));
    at::Tensor flat = value.view({rows, -1});
    for (int64_t row = 0; row < rows; row += block) {
      const int64_t count = std::min(block, rows - row);
      at::Tensor part = at::randn({count, flat.size(1)}, generator) * scale;
      if (norm) part = part + 1.0;
      flat.narrow(0, row, count).copy_(part);
    }
    parameter.set_data(value);
  }
  prefer_fast_linear_layout(model);
}

// FLOPs of one encode: q, k, v, o and the gated feed-forward per token, plus the L x L scores and
// their weighted sum.
double encode_flops(const T5Config& config, int64_t tokens) {
  const double d = double(config.d_model), inner = double(config.inner_dim()), ff = double(config.d_ff);
  const double L = double(tokens);
  const double projections = 2.0 * L * d * inner * 4;
  const double attention = 2.0 * 2.0 * L * L * inner;
  const double feed_forward = 2.0 * L * d * ff * (config.gated ? 3 : 2);
  return double(config.num_layers) * (projections + attention + feed_forward);
}

// This machine's rate for the encoder's largest GEMM (the feed-forward) in the same dtype, through
// the same linear() the model runs.
double gemm_rate(const T5Config& config, int64_t tokens, at::ScalarType dtype, int repeats) {
  at::NoGradGuard no_grad;
  const at::Tensor x = at::randn({tokens, config.d_model});
  at::Tensor weight = (at::randn({config.d_ff, config.d_model}) * 0.02).to(dtype);
  if (dtype == at::kFloat) store_weights_transposed(weight);
  for (int i = 0; i < 2; ++i) linear(x, weight, at::Tensor());  // warm-up (oneDNN primitive creation)
  // The fastest of many: a single product is milliseconds at base shapes, and one slow run from
  // a neighbour's load must not lower the ceiling the encoder is compared with.
  const double seconds = fastest_of(std::max(10, repeats), [&] { linear(x, weight, at::Tensor()); });
  return 2.0 * double(tokens) * double(config.d_model) * double(config.d_ff) / seconds;
}

// The model as transformers saves a large T5EncoderModel: config.json and shards of at most 2 GB
// with model.safetensors.index.json, in `dtype`.
void save_checkpoint(T5EncoderModelImpl& model, const std::string& dir, at::ScalarType dtype) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  const T5Config& config = model.config();
  write_json_file((fs::path(dir) / "config.json").string(),
                  {{"_class_name", "T5EncoderModel"}, {"vocab_size", config.vocab_size}, {"d_model", config.d_model},
                   {"d_kv", config.d_kv}, {"d_ff", config.d_ff}, {"num_layers", config.num_layers},
                   {"num_heads", config.num_heads}, {"feed_forward_proj", "gated-gelu"},
                   {"relative_attention_num_buckets", config.relative_attention_num_buckets},
                   {"relative_attention_max_distance", config.relative_attention_max_distance}});
  constexpr int64_t kShardBytes = int64_t(2) << 30;
  std::vector<std::vector<std::pair<std::string, at::Tensor>>> shards(1);
  int64_t shard_bytes = 0;
  for (const auto& item : model.named_parameters(true)) {
    const int64_t bytes = item.value().numel() * int64_t(c10::elementSize(dtype));
    if (shard_bytes > 0 && shard_bytes + bytes > kShardBytes) {
      shards.emplace_back();
      shard_bytes = 0;
    }
    shards.back().emplace_back(item.key(), item.value());
    shard_bytes += bytes;
  }
  nlohmann::json weight_map = nlohmann::json::object();
  for (size_t i = 0; i < shards.size(); ++i) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", i + 1, shards.size());
    std::vector<std::pair<std::string, at::Tensor>> converted;
    for (const auto& [key, tensor] : shards[i]) {
      converted.emplace_back(key, tensor.to(dtype));
      weight_map[key] = name;
    }
    save_safetensors((fs::path(dir) / name).string(), converted, {{"format", "pt"}});
  }
  write_json_file((fs::path(dir) / "model.safetensors.index.json").string(), {{"weight_map", weight_map}});
}

}  // namespace

TextBenchmarkReport run_text_benchmark(const TextBenchmarkOptions& options) {
  TextBenchmarkReport report;
  report.results = {{"tokens", options.tokens}, {"threads", at::get_num_threads()}, {"rows", nlohmann::json::array()}};
  int done = 0;
  const int total = static_cast<int>(options.shapes.size() * options.dtypes.size());
  for (const std::string& shape : options.shapes) {
    for (const std::string& dtype_name : options.dtypes) {
      const T5Config config = t5_shape(shape);
      const at::ScalarType dtype = dtype_of(dtype_name);
      if (options.progress && !options.progress({"text " + shape + " " + dtype_name, done, total, 0}))
        throw Cancelled();
      // The GEMM rate before and after the encodes, the faster counting: a neighbour's load during
      // one of them must not make the encoder look closer to the ceiling than it is.
      const double rate_before = gemm_rate(config, options.tokens, dtype, options.repeats);
      // The baseline after handing freed memory back (the allocator keeps it otherwise, and a
      // model reusing it would look smaller than it is).
      malloc_trim(0);
      const int64_t resident_before = resident_bytes();
      reset_peak_resident();
      double seconds = 0;
      int64_t weight_bytes = 0, peak = 0;
      const at::Tensor ids = at::randint(1, config.vocab_size, {1, options.tokens}, at::kLong);
      at::Tensor output;
      const std::string checkpoint = options.scratch_dir.empty()
                                         ? std::string()
                                         : (std::filesystem::path(options.scratch_dir) / ("t5-" + shape)).string();
      {
        T5EncoderModel model(config);
        fill_weights(*model, dtype, options.seed);
        for (const auto& parameter : model->parameters()) weight_bytes += parameter.numel() * parameter.element_size();
        output = model->forward(ids);  // also the warm-up
        seconds = fastest_of(options.repeats, [&] { model->forward(ids); });
        peak = peak_resident_bytes() - resident_before;
        if (!checkpoint.empty()) save_checkpoint(*model, checkpoint, dtype_of(options.checkpoint_dtype));
      }
      nlohmann::json load = nullptr;
      if (!checkpoint.empty()) {
        malloc_trim(0);
        const int64_t load_before = resident_bytes();
        reset_peak_resident();
        const auto start = std::chrono::steady_clock::now();
        const T5EncoderModel loaded = load_t5_encoder_model(checkpoint, dtype);
        const double load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const int64_t load_peak = peak_resident_bytes() - load_before;
        // The loaded model is the one that was saved (exactly, when the checkpoint keeps the dtype).
        const double difference = (loaded->forward(ids) - output).abs().max().item<double>();
        std::filesystem::remove_all(checkpoint);
        load = {{"checkpoint_dtype", options.checkpoint_dtype}, {"seconds", load_seconds},
                {"peak_resident_bytes", load_peak}, {"peak_over_weights", double(load_peak) / double(weight_bytes)},
                {"max_output_difference", difference}};
      }
      const double rate = std::max(rate_before, gemm_rate(config, options.tokens, dtype, options.repeats));
      const double flops = encode_flops(config, options.tokens);
      report.results["rows"].push_back({{"shape", shape},
                                        {"dtype", dtype_name},
                                        {"d_model", config.d_model},
                                        {"layers", config.num_layers},
                                        {"seconds", seconds},
                                        {"gflops", flops / 1e9},
                                        {"gflop_per_second", flops / seconds / 1e9},
                                        {"gemm_gflop_per_second", rate / 1e9},
                                        {"fraction_of_gemm", flops / seconds / rate},
                                        {"weight_bytes", weight_bytes},
                                        {"peak_resident_bytes", peak},
                                        {"peak_over_weights", double(peak) / double(weight_bytes)},
                                        {"load", load}});
      ++done;
    }
  }
  if (options.progress) options.progress({"text", done, total, 0});
  return report;
}

std::string TextBenchmarkReport::table() const {
  std::ostringstream out;
  out << "T5 encoder, " << results["tokens"].get<int>() << " tokens, " << results["threads"].get<int>()
      << " threads (GEMM: this machine's rate for the feed-forward GEMM in the same dtype, same run)\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-6s %-5s %9s %9s %9s %10s %9s %10s %10s\n", "shape", "dtype", "seconds", "GFLOP",
                "GFLOP/s", "GEMM GF/s", "of GEMM", "weights", "peak RSS");
  out << line;
  for (const auto& row : results["rows"]) {
    std::snprintf(line, sizeof line, "%-6s %-5s %9.3f %9.1f %9.1f %10.1f %8.0f%% %8.2f GB %7.2fx wt\n",
                  row["shape"].get<std::string>().c_str(), row["dtype"].get<std::string>().c_str(),
                  row["seconds"].get<double>(), row["gflops"].get<double>(), row["gflop_per_second"].get<double>(),
                  row["gemm_gflop_per_second"].get<double>(), 100 * row["fraction_of_gemm"].get<double>(),
                  row["weight_bytes"].get<int64_t>() / 1e9, row["peak_over_weights"].get<double>());
    out << line;
  }
  for (const auto& row : results["rows"]) {
    if (row["load"].is_null()) continue;
    const auto& load = row["load"];
    std::snprintf(line, sizeof line,
                  "load %s %s from a sharded %s checkpoint: %.1f s, peak RSS %.2fx the weights, output difference %.3g\n",
                  row["shape"].get<std::string>().c_str(), row["dtype"].get<std::string>().c_str(),
                  load["checkpoint_dtype"].get<std::string>().c_str(), load["seconds"].get<double>(),
                  load["peak_over_weights"].get<double>(), load["max_output_difference"].get<double>());
    out << line;
  }
  return out.str();
}

}  // namespace flashps::bench
