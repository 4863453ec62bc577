#include "core/kernels/dnnl_matmul.h"

#include <ATen/ATen.h>

#include <atomic>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>

#ifdef FLASHPS_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace flashps {
namespace {
std::atomic<bool> bf16_products_enabled{true};
}  // namespace

void set_dnnl_bf16_linear_enabled(bool enabled) { bf16_products_enabled = enabled; }

#ifdef FLASHPS_HAVE_DNNL
namespace {

// Everything a primitive is specialised for; pointers are bound at execution.
struct ShapeKey {
  int64_t m, k, n, lda, b_row, b_col, ldc;
  bool bias, accumulate;
  bool operator<(const ShapeKey& o) const {
    return std::tie(m, k, n, lda, b_row, b_col, ldc, bias, accumulate) <
           std::tie(o.m, o.k, o.n, o.lda, o.b_row, o.b_col, o.ldc, o.bias, o.accumulate);
  }
};

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

using dims = dnnl::memory::dims;
using dt = dnnl::memory::data_type;

dnnl::memory::desc a_desc(const ShapeKey& key) { return {{key.m, key.k}, dt::bf16, dims{key.lda, 1}}; }
dnnl::memory::desc b_desc(const ShapeKey& key) { return {{key.k, key.n}, dt::bf16, dims{key.b_row, key.b_col}}; }
dnnl::memory::desc bias_desc(const ShapeKey& key) { return {{1, key.n}, dt::f32, dims{key.n, 1}}; }
dnnl::memory::desc c_desc(const ShapeKey& key) { return {{key.m, key.n}, dt::f32, dims{key.ldc, 1}}; }

// oneDNN 3 folded the operation descriptor into the primitive descriptor: the same matmul is
// described either way, picked by the API the installed headers declare.
dnnl::matmul::primitive_desc describe(const ShapeKey& key, const dnnl::primitive_attr& attr) {
#if DNNL_VERSION_MAJOR >= 3
  return key.bias ? dnnl::matmul::primitive_desc(cpu_engine(), a_desc(key), b_desc(key), bias_desc(key), c_desc(key), attr)
                  : dnnl::matmul::primitive_desc(cpu_engine(), a_desc(key), b_desc(key), c_desc(key), attr);
#else
  const dnnl::matmul::desc desc = key.bias ? dnnl::matmul::desc(a_desc(key), b_desc(key), bias_desc(key), c_desc(key))
                                           : dnnl::matmul::desc(a_desc(key), b_desc(key), c_desc(key));
  return dnnl::matmul::primitive_desc(desc, attr, cpu_engine());
#endif
}

// Null when oneDNN has no native kernel for the shape (its reference kernels are too slow).
const dnnl::matmul* primitive_for(const ShapeKey& key) {
  // Per thread: a primitive's scratchpad is its own unless oneDNN was built for concurrent
  // execution, so threads (engine workers) must not share one.
  thread_local std::map<ShapeKey, std::unique_ptr<dnnl::matmul>> cache;
  auto found = cache.find(key);
  if (found != cache.end()) return found->second.get();
  if (cache.size() >= 512) cache.clear();  // bounded: masks of many sizes create many shapes
  dnnl::primitive_attr attr;
  if (key.accumulate) {
    dnnl::post_ops sum;
    sum.append_sum(1.0f);
    attr.set_post_ops(sum);
  }
  std::unique_ptr<dnnl::matmul> primitive;
  try {
    const dnnl::matmul::primitive_desc pd = describe(key, attr);
    if (std::string(pd.impl_info_str()).rfind("ref", 0) != 0) primitive = std::make_unique<dnnl::matmul>(pd);
  } catch (const dnnl::error&) {
    // unsupported on this CPU or build: the caller's other path runs it
  }
  return cache.emplace(key, std::move(primitive)).first->second.get();
}

void execute(const dnnl::matmul& primitive, const ShapeKey& key, const void* a, const void* b, const float* bias,
             float* c) {
  dnnl::engine& engine = cpu_engine();
  std::unordered_map<int, dnnl::memory> arguments{
      {DNNL_ARG_SRC, dnnl::memory(a_desc(key), engine, const_cast<void*>(a))},
      {DNNL_ARG_WEIGHTS, dnnl::memory(b_desc(key), engine, const_cast<void*>(b))},
      {DNNL_ARG_DST, dnnl::memory(c_desc(key), engine, c)}};
  if (bias) arguments.emplace(DNNL_ARG_BIAS, dnnl::memory(bias_desc(key), engine, const_cast<float*>(bias)));
  thread_local dnnl::stream stream(engine);
  primitive.execute(stream, arguments);
  stream.wait();
}

}  // namespace
#endif

bool dnnl_bf16_gemm(int64_t m, int64_t k, int64_t n, const void* a, int64_t lda, const void* b, int64_t b_row,
                    int64_t b_col, float* c, int64_t ldc, bool accumulate) {
#ifdef FLASHPS_HAVE_DNNL
  if (!bf16_products_enabled || m <= 0 || k <= 0 || n <= 0) return false;
  const ShapeKey key{m, k, n, lda, b_row, b_col, ldc, false, accumulate};
  const dnnl::matmul* primitive = primitive_for(key);
  if (!primitive) return false;
  execute(*primitive, key, a, b, nullptr, c);
  return true;
#else
  (void)m, (void)k, (void)n, (void)a, (void)lda, (void)b, (void)b_row, (void)b_col, (void)c, (void)ldc, (void)accumulate;
  return false;
#endif
}

bool dnnl_bf16_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, at::Tensor& out,
                      bool accumulate) {
#ifdef FLASHPS_HAVE_DNNL
  if (!bf16_products_enabled || !x.device().is_cpu() || !weight.device().is_cpu() || !out.device().is_cpu() ||
      weight.scalar_type() != at::kBFloat16 || out.scalar_type() != at::kFloat || x.dim() != 2 || out.dim() != 2 ||
      weight.dim() != 2 || weight.stride(1) != 1 || out.stride(1) != 1 || x.size(0) == 0)
    return false;
  const int64_t m = x.size(0), k = x.size(1), n = weight.size(0);
  if (weight.size(1) != k || out.size(0) != m || out.size(1) != n) return false;
  // weight [n, k] row-major is the [k, n] operand with strides (1, row stride).
  const ShapeKey key{m, k, n, k, 1, weight.stride(0), out.stride(0), bias.defined(), accumulate};
  const dnnl::matmul* primitive = primitive_for(key);
  if (!primitive) return false;
  const at::Tensor src = x.to(at::kBFloat16).contiguous();
  const at::Tensor bias_f32 = bias.defined() ? bias.to(at::kFloat).contiguous() : at::Tensor();
  execute(*primitive, key, src.data_ptr(), weight.data_ptr(), bias_f32.defined() ? bias_f32.data_ptr<float>() : nullptr,
          out.data_ptr<float>());
  return true;
#else
  (void)x, (void)weight, (void)bias, (void)out, (void)accumulate;
  return false;
#endif
}

}  // namespace flashps
