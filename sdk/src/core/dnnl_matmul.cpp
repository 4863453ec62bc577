#include "core/dnnl_matmul.h"

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

#ifdef FLASHPS_HAVE_DNNL
namespace {

struct ShapeKey {
  int64_t m, k, n, weight_stride, out_stride;
  bool bias, accumulate;
  bool operator<(const ShapeKey& o) const {
    return std::tie(m, k, n, weight_stride, out_stride, bias, accumulate) <
           std::tie(o.m, o.k, o.n, o.weight_stride, o.out_stride, o.bias, o.accumulate);
  }
};

struct CachedPrimitive {
  std::unique_ptr<dnnl::matmul> primitive;  // null: oneDNN has no native kernel for it
};

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// oneDNN 3 folded the operation descriptor into the primitive descriptor: the same matmul is
// described either way, picked by the API the installed headers declare.
dnnl::matmul::primitive_desc describe(const dnnl::memory::desc& src, const dnnl::memory::desc& weights,
                                      const dnnl::memory::desc* bias, const dnnl::memory::desc& dst,
                                      const dnnl::primitive_attr& attr) {
#if DNNL_VERSION_MAJOR >= 3
  return bias ? dnnl::matmul::primitive_desc(cpu_engine(), src, weights, *bias, dst, attr)
              : dnnl::matmul::primitive_desc(cpu_engine(), src, weights, dst, attr);
#else
  const dnnl::matmul::desc desc = bias ? dnnl::matmul::desc(src, weights, *bias, dst) : dnnl::matmul::desc(src, weights, dst);
  return dnnl::matmul::primitive_desc(desc, attr, cpu_engine());
#endif
}

const CachedPrimitive& primitive_for(const ShapeKey& key) {
  // Per thread: a primitive's scratchpad is its own unless oneDNN was built for concurrent
  // execution, so threads (engine workers) must not share one.
  thread_local std::map<ShapeKey, CachedPrimitive> cache;
  auto found = cache.find(key);
  if (found != cache.end()) return found->second;
  if (cache.size() >= 256) cache.clear();  // bounded: masks of many sizes create many shapes
  using dims = dnnl::memory::dims;
  using dt = dnnl::memory::data_type;
  const dnnl::memory::desc src({key.m, key.k}, dt::bf16, dims{key.k, 1});
  const dnnl::memory::desc weights({key.k, key.n}, dt::bf16, dims{1, key.weight_stride});
  const dnnl::memory::desc bias({1, key.n}, dt::f32, dims{key.n, 1});
  const dnnl::memory::desc dst({key.m, key.n}, dt::f32, dims{key.out_stride, 1});
  dnnl::primitive_attr attr;
  if (key.accumulate) {
    dnnl::post_ops sum;
    sum.append_sum(1.0f);
    attr.set_post_ops(sum);
  }
  CachedPrimitive entry;
  try {
    const dnnl::matmul::primitive_desc pd = describe(src, weights, key.bias ? &bias : nullptr, dst, attr);
    const std::string implementation = pd.impl_info_str();
    if (implementation.rfind("ref", 0) != 0) entry.primitive = std::make_unique<dnnl::matmul>(pd);
  } catch (const dnnl::error&) {
    // unsupported on this CPU or build: LibTorch's path runs it
  }
  return cache.emplace(key, std::move(entry)).first->second;
}

}  // namespace
#endif

namespace {
std::atomic<bool> bf16_linear_enabled{true};
}  // namespace

void set_dnnl_bf16_linear_enabled(bool enabled) { bf16_linear_enabled = enabled; }
bool dnnl_bf16_linear_enabled() { return bf16_linear_enabled; }

bool dnnl_bf16_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, at::Tensor& out,
                      bool accumulate) {
#ifdef FLASHPS_HAVE_DNNL
  if (!bf16_linear_enabled || !x.device().is_cpu() || !weight.device().is_cpu() || !out.device().is_cpu() ||
      weight.scalar_type() != at::kBFloat16 || out.scalar_type() != at::kFloat || x.dim() != 2 || out.dim() != 2 ||
      weight.dim() != 2 || weight.stride(1) != 1 || out.stride(1) != 1 || x.size(0) == 0)
    return false;
  const int64_t m = x.size(0), k = x.size(1), n = weight.size(0);
  if (weight.size(1) != k || out.size(0) != m || out.size(1) != n) return false;
  const ShapeKey key{m, k, n, weight.stride(0), out.stride(0), bias.defined(), accumulate};
  const CachedPrimitive& cached = primitive_for(key);
  if (!cached.primitive) return false;
  const at::Tensor src = x.to(at::kBFloat16).contiguous();
  at::Tensor bias_f32 = bias.defined() ? bias.to(at::kFloat).contiguous() : at::Tensor();
  using dims = dnnl::memory::dims;
  using dt = dnnl::memory::data_type;
  dnnl::engine& engine = cpu_engine();
  dnnl::memory src_memory({{m, k}, dt::bf16, dims{k, 1}}, engine, src.data_ptr());
  dnnl::memory weight_memory({{k, n}, dt::bf16, dims{1, weight.stride(0)}}, engine, weight.data_ptr());
  dnnl::memory dst_memory({{m, n}, dt::f32, dims{out.stride(0), 1}}, engine, out.data_ptr());
  std::unordered_map<int, dnnl::memory> arguments{
      {DNNL_ARG_SRC, src_memory}, {DNNL_ARG_WEIGHTS, weight_memory}, {DNNL_ARG_DST, dst_memory}};
  if (bias_f32.defined())
    arguments.emplace(DNNL_ARG_BIAS, dnnl::memory({{1, n}, dt::f32, dims{n, 1}}, engine, bias_f32.data_ptr()));
  thread_local dnnl::stream stream(engine);
  cached.primitive->execute(stream, arguments);
  stream.wait();
  return true;
#else
  (void)x;
  (void)weight;
  (void)bias;
  (void)out;
  (void)accumulate;
  return false;
#endif
}

}  // namespace flashps
