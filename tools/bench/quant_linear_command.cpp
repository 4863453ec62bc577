// `flashps-bench bench quant-linear`: a Linear product at Flux sizes with its weight in float32,
// bfloat16, and kept as stored in float8 and GGUF block formats (decoded chunk by chunk just
// before use, core/quant/quantized_matrix.h), side by side in one run, as ratios to bfloat16;
// then the chunk size's effect; then the peak resident memory of loading a GGUF file with its
// quantized matrices kept as stored vs decoded, against the file's size.
// Weights are random blocks with valid scales (timings do not depend on the values).
#include <malloc.h>
#include <sys/resource.h>

#include <ATen/ATen.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "core/diagnostics/error.h"
#include "core/files/gguf_file.h"
#include "core/kernels/linear.h"
#include "core/quant/quantized_matrix.h"
#include "core/quant/random_blocks.h"
#include "developer_commands.h"
#include "models/common/layers.h"
#include "models/flux/flux_transformer.h"
#include "models/loading/checkpoint_tensors.h"
#include "models/loading/checkpoint_file.h"

namespace flashps::bench_tool {
namespace {

struct QuantLinearOptions {
  int64_t in = 3072;
  std::vector<int64_t> outs = {3072, 12288};
  std::vector<int64_t> rows = {4096, 820};
  std::vector<std::string> encodings = {"f32", "bf16", "fp8", "Q8_0", "Q5_K", "Q4_0", "Q4_K"};
  std::string compute = "bf16";
  std::vector<int64_t> chunk_rows = {512, 2048, 6144, 0};  // 0: the default
  std::string chunk_encoding = "Q4_K";
  int repeats = 3;
  double gguf_mb = 512;
  std::string gguf_file;
};

int64_t quant_bench_status_bytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1)) * 1024;
  return 0;
}

double quant_bench_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + 1e-6 * double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

QuantizedEncoding encoding_named(const std::string& name) {
  if (name == "fp8" || name == "F8_E4M3") return QuantizedEncoding::float8_e4m3fn();
  if (name == "fp8_e5m2" || name == "F8_E5M2") return QuantizedEncoding::float8_e5m2();
  for (uint32_t type = 0; type < 64; ++type) {
    const GgmlTypeTraits* traits = ggml_type_traits(type);
    if (traits && traits->block_size > 1 && name == traits->name) return QuantizedEncoding::ggml(traits->type);
  }
  throw InvalidArgumentError("--encodings: unknown encoding '" + name + "' (f32, bf16, fp8, fp8_e5m2, Q8_0, Q4_K, ...)");
}

// One product's weight in one encoding, and how to run it.
struct BenchWeight {
  at::Tensor dense;                          // f32 / bf16
  std::shared_ptr<QuantizedMatrix> matrix;   // quantized
  double bytes = 0;
};

BenchWeight make_bench_weight(const std::string& name, int64_t out, int64_t in) {
  BenchWeight weight;
  if (name == "f32" || name == "bf16") {
    weight.dense = at::randn({out, in}).mul_(0.02);
    if (name == "bf16") weight.dense = weight.dense.to(at::kBFloat16);
    else store_weights_transposed(weight.dense);  // as loaded models store float32 weights
    weight.bytes = double(weight.dense.numel() * weight.dense.element_size());
    return weight;
  }
  const QuantizedEncoding encoding = encoding_named(name);
  auto bytes = std::make_shared<std::vector<uint8_t>>(random_quantized_rows(encoding, out, in, uint64_t(out)));
  weight.matrix = std::make_shared<QuantizedMatrix>(encoding, in, std::vector<QuantizedSegment>{{bytes->data(), out}},
                                                    std::vector<std::shared_ptr<const void>>{bytes}, name);
  weight.bytes = double(bytes->size());
  return weight;
}

// Fastest of `repeats` runs: wall seconds and the process CPU seconds of that run.
std::pair<double, double> time_product(const BenchWeight& weight, const at::Tensor& x, const at::Tensor& bias,
                                       at::ScalarType compute, int64_t chunk_rows, int repeats) {
  at::NoGradGuard no_grad;
  std::pair<double, double> best{1e30, 0};
  for (int run = 0; run < repeats + 1; ++run) {  // the first run warms caches and primitives
    const double cpu_start = quant_bench_cpu_seconds();
    const auto start = std::chrono::steady_clock::now();
    at::Tensor y = weight.matrix ? weight.matrix->linear(x, bias, compute, chunk_rows) : linear(x, weight.dense, bias);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double cpu = quant_bench_cpu_seconds() - cpu_start;
    if (run > 0 && wall < best.first) best = {wall, cpu};
  }
  return best;
}

// Fastest of `repeats` decodings of the whole matrix to `compute` (0 for dense weights).
double time_decode(const BenchWeight& weight, at::ScalarType compute, int repeats) {
  if (!weight.matrix) return 0;
  double best = 1e30;
  for (int run = 0; run < repeats + 1; ++run) {
    const auto start = std::chrono::steady_clock::now();
    const at::Tensor decoded = weight.matrix->dequantize(compute);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (run > 0) best = std::min(best, wall);
  }
  return best;
}

void run_product_table(const QuantLinearOptions& options) {
  const at::ScalarType compute = options.compute == "fp32" ? at::kFloat : at::kBFloat16;
  std::printf("Linear y = x W^T + b, in %lld; quantized weights decoded to %s chunk by chunk (default chunk rows %lld)\n",
              (long long)options.in, options.compute.c_str(), (long long)default_quantized_chunk_rows(options.in));
  std::printf("%-8s %6s %6s %10s %10s %10s %9s %10s\n", "weight", "out", "rows", "MB", "wall ms", "cpu ms", "vs bf16",
              "decode ms");
  for (int64_t out : options.outs) {
    std::vector<std::pair<std::string, BenchWeight>> weights;
    std::map<std::string, double> decode_seconds;  // the whole matrix, once
    for (const std::string& name : options.encodings) {
      weights.emplace_back(name, make_bench_weight(name, out, options.in));
      decode_seconds[name] = time_decode(weights.back().second, compute, options.repeats);
    }
    const at::Tensor bias = at::randn({out});
    for (int64_t rows : options.rows) {
      const at::Tensor x = at::randn({rows, options.in});
      double bf16_seconds = 0;
      std::vector<std::tuple<std::string, double, std::pair<double, double>>> results;
      for (const auto& [name, weight] : weights) {
        const auto timing = time_product(weight, x, bias, compute, 0, options.repeats);
        if (name == "bf16") bf16_seconds = timing.first;
        results.emplace_back(name, weight.bytes, timing);
      }
      for (const auto& [name, bytes, timing] : results)
        std::printf("%-8s %6lld %6lld %10.1f %10.1f %10.1f %9s %10.1f\n", name.c_str(), (long long)out, (long long)rows,
                    bytes / 1e6, 1e3 * timing.first, 1e3 * timing.second,
                    bf16_seconds > 0 ? (std::to_string(timing.first / bf16_seconds).substr(0, 4) + "x").c_str() : "-",
                    1e3 * decode_seconds[name]);
      std::fflush(stdout);
    }
  }
}

void run_chunk_table(const QuantLinearOptions& options) {
  if (options.chunk_rows.empty()) return;
  const at::ScalarType compute = options.compute == "fp32" ? at::kFloat : at::kBFloat16;
  const int64_t out = options.outs.back();
  const BenchWeight weight = make_bench_weight(options.chunk_encoding, out, options.in);
  const at::Tensor bias = at::randn({out});
  std::printf("\nChunk rows (%s, out %lld; 0: the default, %lld): wall / cpu ms per rows of x\n",
              options.chunk_encoding.c_str(), (long long)out, (long long)default_quantized_chunk_rows(options.in));
  for (int64_t rows : options.rows) {
    const at::Tensor x = at::randn({rows, options.in});
    std::printf("rows %5lld:", (long long)rows);
    for (int64_t chunk : options.chunk_rows) {
      const auto timing = time_product(weight, x, bias, compute, chunk, options.repeats);
      std::printf("  %lld: %.0f / %.0f", (long long)chunk, 1e3 * timing.first, 1e3 * timing.second);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
}

// A GGUF file of Flux-block-sized Q4_0 / Q8_0 matrices (and their F32 biases), about `megabytes`.
std::string write_bench_gguf(double megabytes) {
  const std::string path = (std::filesystem::temp_directory_path() / "flashps-quant-linear-bench.gguf").string();
  GgufWriter writer;
  double written = 0;
  for (int index = 0; written < megabytes * 1e6; ++index) {
    const GgmlType type = index % 4 == 3 ? GgmlType::Q8_0 : GgmlType::Q4_0;
    const int64_t out = index % 2 ? 12288 : 3072, in = 3072;
    const std::vector<uint8_t> bytes = random_quantized_rows(QuantizedEncoding::ggml(type), out, in, uint64_t(index));
    writer.add_tensor("blocks." + std::to_string(index) + ".weight", type, {in, out}, bytes.data(), bytes.size());
    const std::vector<float> bias(size_t(out), 0.01f);
    writer.add_tensor("blocks." + std::to_string(index) + ".bias", GgmlType::F32, {out}, bias.data(), bias.size() * 4);
    written += double(bytes.size() + bias.size() * 4);
  }
  writer.write(path);
  return path;
}

// Loads every tensor of `path` as a model would (quantized matrices kept, or everything decoded
// to bfloat16) and reports the peak resident memory the load added.
void run_load_rss(const std::string& path, bool keep_quantized) {
  malloc_trim(0);
  std::ofstream("/proc/self/clear_refs") << "5";  // resets VmHWM to the current resident size
  const int64_t baseline = quant_bench_status_bytes("VmRSS");
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = quant_bench_cpu_seconds();
  std::vector<std::shared_ptr<const QuantizedMatrix>> kept;
  std::vector<at::Tensor> decoded;
  {
    const auto tensors = open_checkpoint_file(path);
    for (const auto& [key, entry] : tensors->entries()) {
      if (keep_quantized && entry.quantized) {
        kept.push_back(tensors->read_quantized(key));
        kept.back()->require_finite();  // as load_weights_strict: decodes once, pages dropped below
      } else {
        decoded.push_back(tensors->read(key).to(at::kBFloat16));
      }
      tensors->release(key);
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu = quant_bench_cpu_seconds() - cpu_start;
  const double file_mb = double(std::filesystem::file_size(path)) / 1e6;
  const double peak_mb = double(quant_bench_status_bytes("VmHWM") - baseline) / 1e6;
  std::printf("%-22s file %8.1f MB  peak RSS added %8.1f MB (%.2fx file)  resident after %8.1f MB  load %.2f s (cpu %.2f s)\n",
              keep_quantized ? "kept as stored" : "decoded to bf16", file_mb, peak_mb, peak_mb / file_mb,
              double(quant_bench_status_bytes("VmRSS") - baseline) / 1e6, seconds, cpu);
  std::fflush(stdout);
}

// A Flux transformer at FLUX.1's width (3072) with `double_blocks` + `single_blocks` blocks, its
// matrices random Q4_0 blocks (rows of 32-value multiples), everything else F32, as a GGUF file in
// diffusers' keys (written when absent).
FluxConfig bench_flux_config(int64_t double_blocks, int64_t single_blocks) {
  FluxConfig config;
  config.in_channels = 384;
  config.out_channels = 64;
  config.num_layers = double_blocks;
  config.num_single_layers = single_blocks;
  config.guidance_embeds = true;
  return config;
}

void write_bench_flux_gguf(const std::string& path, const FluxConfig& config) {
  GgufWriter writer;
  {
    FluxTransformer model(config);  // placeholders only: shapes and names, never touched
    for (const auto& item : model->named_parameters()) {
      const at::Tensor& parameter = item.value();
      std::vector<int64_t> ne(parameter.sizes().rbegin(), parameter.sizes().rend());
      if (parameter.dim() == 2 && parameter.size(1) % 32 == 0) {
        const std::vector<uint8_t> bytes = random_quantized_rows(QuantizedEncoding::ggml(GgmlType::Q4_0),
                                                                 parameter.size(0), parameter.size(1), ne[1]);
        writer.add_tensor(item.key(), GgmlType::Q4_0, ne, bytes.data(), bytes.size());
      } else {
        const bool scale = item.key().find("norm") != std::string::npos;
        const std::vector<float> values(size_t(parameter.numel()), scale ? 1.0f : 0.01f);
        writer.add_tensor(item.key(), GgmlType::F32, ne, values.data(), values.size() * 4);
      }
    }
  }
  writer.write(path);
}

// Loads the file (kept as stored, or decoded to bf16) and runs one forward pass at `grid`^2 image
// tokens and 512 text tokens; reports the peak RSS the load and the pass added.
void run_flux_model_rss(const std::string& path, const FluxConfig& config, bool keep_quantized, int64_t grid) {
  malloc_trim(0);
  std::ofstream("/proc/self/clear_refs") << "5";
  const int64_t baseline = quant_bench_status_bytes("VmRSS");
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = quant_bench_cpu_seconds();
  FluxTransformer model{nullptr};
  {
    const auto tensors = gguf_tensors(GgufFile::open(path));
    model = load_flux_transformer(*tensors, config, path, at::kBFloat16, keep_quantized);
  }
  const double load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double load_cpu = quant_bench_cpu_seconds() - cpu_start;
  const double load_peak = double(quant_bench_status_bytes("VmHWM") - baseline) / 1e6;
  const WeightFootprint footprint = weight_footprint(*model);
  std::printf("%-16s weights: %.1f MB dense, %.1f MB as stored (%lld matrices); RSS after load %.1f MB\n",
              keep_quantized ? "kept as stored" : "decoded to bf16", footprint.dense_bytes / 1e6,
              footprint.quantized_bytes / 1e6, (long long)footprint.quantized_matrices,
              double(quant_bench_status_bytes("VmRSS") - baseline) / 1e6);
  at::NoGradGuard no_grad;
  const int64_t tokens = grid * grid, text = 512;
  at::Tensor ids = at::zeros({tokens, 3});
  const auto step_start = std::chrono::steady_clock::now();
  const double step_cpu_start = quant_bench_cpu_seconds();
  const at::Tensor out = model->forward_batched(
      at::randn({1, tokens, config.in_channels}), at::randn({1, text, config.joint_attention_dim}),
      at::randn({1, config.pooled_projection_dim}), at::full({1}, 0.5), ids, at::zeros({text, 3}), at::full({1}, 3.5));
  const double step_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start).count();
  const double step_cpu = quant_bench_cpu_seconds() - step_cpu_start;
  const double file_mb = double(std::filesystem::file_size(path)) / 1e6;
  const double step_peak = double(quant_bench_status_bytes("VmHWM") - baseline) / 1e6;
  std::printf("%-16s file %7.1f MB | load: %6.1f s (cpu %6.1f), peak RSS added %7.1f MB (%.2fx file) | "
              "forward at %lld tokens: %6.1f s (cpu %6.1f), peak RSS added %7.1f MB (%.2fx file)\n",
              keep_quantized ? "kept as stored" : "decoded to bf16", file_mb, load_seconds, load_cpu, load_peak,
              load_peak / file_mb, (long long)tokens, step_seconds, step_cpu, step_peak, step_peak / file_mb);
  std::fflush(stdout);
}

}  // namespace

void add_quant_linear_command(CLI::App& bench, CommandAction& action) {
  static QuantLinearOptions options;
  static bool skip_products = false, skip_load = false;
  CLI::App* command = bench.add_subcommand(
      "quant-linear", "Linear products with float32, bfloat16, fp8 and GGUF block weights side by side, chunk sizes, "
                      "and peak RSS of loading a GGUF file kept as stored vs decoded");
  command->add_option("--in", options.in, "Input features")->capture_default_str();
  command->add_option("--outs", options.outs, "Output features (one table per value)");
  command->add_option("--rows", options.rows, "Rows of x (4096: a 1024^2 edit's tokens; ~0.2x: a masked edit)");
  command->add_option("--encodings", options.encodings, "f32, bf16, fp8, fp8_e5m2, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q*_K");
  command->add_option("--compute", options.compute, "dtype quantized weights decode to: bf16 or fp32")
      ->check(CLI::IsMember({"bf16", "fp32"}))
      ->capture_default_str();
  command->add_option("--chunk-rows", options.chunk_rows, "Chunk sizes to compare (0: the default)");
  static bool skip_chunks = false;
  command->add_flag("--no-chunks", skip_chunks, "No chunk size comparison");
  command->add_option("--chunk-encoding", options.chunk_encoding, "Encoding of the chunk comparison")->capture_default_str();
  command->add_option("--repeats", options.repeats, "Timed runs per row (fastest reported)")->capture_default_str();
  command->add_option("--gguf", options.gguf_file, "GGUF file for the load measurement (default: one written to /tmp)");
  command->add_option("--gguf-mb", options.gguf_mb, "Size of the GGUF file written for the load measurement")
      ->capture_default_str();
  static std::string flux_gguf;
  static std::vector<int64_t> flux_blocks = {2, 4};
  static int64_t flux_grid = 32;
  command->add_option("--flux-gguf", flux_gguf,
                      "Instead of the rest: a Flux transformer of FLUX.1's width in random Q4_0 at this path "
                      "(written when absent), loaded kept as stored and decoded to bf16, one forward pass each");
  command->add_option("--flux-blocks", flux_blocks, "Double and single blocks of --flux-gguf")->expected(2);
  command->add_option("--flux-grid", flux_grid, "Image token grid side of the forward pass")->capture_default_str();
  command->add_flag("--no-products", skip_products, "Only the load measurement");
  command->add_flag("--no-load", skip_load, "Only the products");
  command->callback([&action] {
    action = [] {
      if (!flux_gguf.empty()) {
        const FluxConfig config = bench_flux_config(flux_blocks[0], flux_blocks[1]);
        if (!std::filesystem::exists(flux_gguf)) write_bench_flux_gguf(flux_gguf, config);
        run_flux_model_rss(flux_gguf, config, true, flux_grid);
        run_flux_model_rss(flux_gguf, config, false, flux_grid);
        return 0;
      }
      if (!skip_load) {
        // First, before the products' buffers inflate the heap.
        const bool written = options.gguf_file.empty();
        const std::string path = written ? write_bench_gguf(options.gguf_mb) : options.gguf_file;
        std::printf("Loading %s (%s)\n", path.c_str(), written ? "random Q4_0/Q8_0 blocks, written now" : "given");
        run_load_rss(path, true);
        run_load_rss(path, false);
        if (written) std::filesystem::remove(path);
        std::printf("\n");
      }
      if (!skip_products) {
        run_product_table(options);
        if (!skip_chunks) run_chunk_table(options);
      }
      return 0;
    };
  });
}

}  // namespace flashps::bench_tool
