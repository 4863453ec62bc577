// Does packing the weights once (oneDNN matmul with format_tag::any weights, reordered up front)
// beat what FlashPS runs today at the Flux bench config's GEMM shapes? Times, per shape and row
// count, oneDNN's sgemm (the fp32 path of core/kernels/linear.cpp), the matmul primitive on plain
// weights, and the same primitive on pre-packed weights, in fp32 and bf16 (bf16: the input's
// rounding to bf16 included). The weights stay in cache between repetitions, so this is the
// kernel's best case; in a model the weights of 12 blocks do not fit in cache.
//
// Built against Debian 12's oneDNN 2.6 (the operation-descriptor API):
//   g++ -O2 -std=c++17 benchmarks/onednn_prepack_probe.cpp -ldnnl -o /tmp/onednn_prepack_probe
//   OMP_NUM_THREADS=2 /tmp/onednn_prepack_probe
#include <oneapi/dnnl/dnnl.hpp>

#include <chrono>
#include <cstdio>
#include <vector>

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <typename Run>
static double seconds_per_run(Run run, int repeats) {
  run();  // warm-up
  const double start = now();
  for (int r = 0; r < repeats; ++r) run();
  return (now() - start) / repeats;
}

int main() {
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  // in x out of the bench config's fused QKV, MLP in, MLP out and attention output projections.
  const int shapes[][2] = {{512, 1536}, {512, 2048}, {2048, 512}, {512, 512}};
  // Rows computed at m = 0.05 and 0.2 (with the 64 text rows) and at full size.
  const int row_counts[] = {115, 269, 1088};
  const int repeats = 200;
  std::printf("%6s %6s %6s %5s %12s %14s %15s  (GFLOP/s)\n", "in", "out", "rows", "dtype", "sgemm",
              "matmul plain", "matmul packed");
  for (const auto& shape : shapes) {
    const int k = shape[0], n = shape[1];
    std::vector<float> weights(size_t(k) * n, 0.01f);
    for (int m : row_counts) {
      std::vector<float> a(size_t(m) * k, 0.5f), c(size_t(m) * n);
      const double flops = 2.0 * m * k * n;
      const double sgemm = seconds_per_run(
          [&] { dnnl_sgemm('N', 'N', m, n, k, 1.f, a.data(), k, weights.data(), n, 0.f, c.data(), n); }, repeats);
      for (dt weight_type : {dt::f32, dt::bf16}) {
        const dnnl::memory::desc src_md({m, k}, weight_type, tag::ab), dst_md({m, n}, dt::f32, tag::ab);
        const dnnl::memory::desc plain_md({k, n}, weight_type, tag::ab), any_md({k, n}, weight_type, tag::any);
        dnnl::memory f32_weights({{k, n}, dt::f32, tag::ab}, engine, weights.data());
        dnnl::memory f32_src({{m, k}, dt::f32, tag::ab}, engine, a.data());
        dnnl::memory src(src_md, engine), dst(dst_md, engine, c.data());
        dnnl::reorder to_src(f32_src, src);
        auto time_with = [&](const dnnl::memory::desc& weights_md) {
          dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, weights_md, dst_md), engine);
          dnnl::matmul matmul(pd);
          dnnl::memory packed(pd.weights_desc(), engine);
          dnnl::reorder(f32_weights, packed).execute(stream, f32_weights, packed);  // once, up front
          return seconds_per_run(
              [&] {
                if (weight_type == dt::bf16) to_src.execute(stream, f32_src, src);
                matmul.execute(stream, {{DNNL_ARG_SRC, weight_type == dt::f32 ? f32_src : src},
                                        {DNNL_ARG_WEIGHTS, packed},
                                        {DNNL_ARG_DST, dst}});
                stream.wait();
              },
              repeats);
        };
        const double plain = time_with(plain_md), packed = time_with(any_md);
        std::printf("%6d %6d %6d %5s %12.0f %14.0f %15.0f\n", k, n, m, weight_type == dt::f32 ? "fp32" : "bf16",
                    flops / sgemm / 1e9, flops / plain / 1e9, flops / packed / 1e9);
      }
    }
  }
  return 0;
}
