#include "core/kernels/linear.h"

#include "core/kernels/autograd_mode.h"
#include "core/kernels/dnnl_matmul.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#ifdef FLASHPS_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

namespace flashps {
namespace {

bool use_dnnl_fp32(const at::Tensor& a, const at::Tensor& b) {
#ifdef FLASHPS_HAVE_DNNL
  return a.device().is_cpu() && b.device().is_cpu() && a.scalar_type() == at::kFloat &&
         b.scalar_type() == at::kFloat && !needs_autograd(a, b);
#else
  (void)a;
  (void)b;
  return false;
#endif
}

#ifdef FLASHPS_HAVE_DNNL
// Row-major C[m,n] = A[m,k] * op(B) (+ C when beta = 1).
void sgemm(bool transpose_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  dnnl_sgemm('N', transpose_b ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
}

// result [m, out] = rows [m, in] @ weight^T (+ beta * result). A weight stored column-major
// (see store_weights_transposed) is read as a row-major [in, out] matrix: oneDNN's sgemm is
// markedly faster in that layout for the few hundred rows of a masked edit.
void multiply_weight(const at::Tensor& rows, const at::Tensor& weight, float beta, at::Tensor& result) {
  const int64_t m = rows.size(0), in = weight.size(1), out = weight.size(0);
  if (weight.stride(0) == 1 && weight.stride(1) >= out) {
    sgemm(false, m, out, in, rows.data_ptr<float>(), rows.size(1), weight.data_ptr<float>(), weight.stride(1),
          beta, result.data_ptr<float>(), result.size(1));
  } else {
    at::Tensor w = weight.stride(1) == 1 ? weight : weight.contiguous();  // row-strided slices in place
    sgemm(true, m, out, in, rows.data_ptr<float>(), rows.size(1), w.data_ptr<float>(), w.stride(0), beta,
          result.data_ptr<float>(), result.size(1));
  }
}
#endif

}  // namespace

at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  if (x.scalar_type() == at::kFloat && weight.scalar_type() == at::kBFloat16) {
    if (!needs_autograd(x, weight, bias)) {
      const int64_t out_features = weight.size(0);
      at::Tensor rows = x.reshape({-1, weight.size(1)});
      at::Tensor result = at::empty({rows.size(0), out_features}, x.options());
      if (dnnl_bf16_linear(rows, weight, bias, result, /*accumulate=*/false)) {
        auto shape = x.sizes().vec();
        shape.back() = out_features;
        return result.view(shape);
      }
    }
    // No bias in the bf16 product: LibTorch's addmm path is much slower than plain matmul.
    at::Tensor product = at::matmul(x.to(at::kBFloat16), weight.t()).to(at::kFloat);
    if (bias.defined()) product.add_(bias.to(at::kFloat));
    return product;
  }
  if (!use_dnnl_fp32(x, weight) || x.numel() == 0 || needs_autograd(bias)) return at::linear(x, weight, bias);
#ifdef FLASHPS_HAVE_DNNL
  const int64_t in = weight.size(1), out = weight.size(0);
  at::Tensor rows = x.reshape({-1, in}).contiguous();
  const int64_t m = rows.size(0);
  at::Tensor result;
  float beta = 0.0f;
  if (bias.defined()) {
    // gemm accumulates onto a fresh copy of the bias (never onto the parameter itself: for one
    // row, expand().contiguous() would alias it).
    result = at::empty({m, out}, rows.options());
    result.copy_(bias.to(at::kFloat).expand({m, out}));
    beta = 1.0f;
  } else {
    result = at::empty({m, out}, rows.options());
  }
  multiply_weight(rows, weight, beta, result);
  auto shape = x.sizes().vec();
  shape.back() = out;
  return result.view(shape);
#endif
}

void linear_accumulate(at::Tensor& out, const at::Tensor& x, const at::Tensor& weight_columns) {
  if (x.scalar_type() == at::kFloat && weight_columns.scalar_type() == at::kBFloat16) {
    if (!needs_autograd(out, x, weight_columns) && x.dim() == 2 &&
        dnnl_bf16_linear(x, weight_columns, at::Tensor(), out, /*accumulate=*/true))
      return;
    out.add_(at::matmul(x.to(at::kBFloat16), weight_columns.t()).to(at::kFloat));
    return;
  }
#ifdef FLASHPS_HAVE_DNNL
  if (use_dnnl_fp32(x, weight_columns) && out.is_contiguous() && out.scalar_type() == at::kFloat &&
      x.numel() > 0) {
    at::Tensor rows = x.contiguous();
    multiply_weight(rows, weight_columns, 1.0f, out);
    return;
  }
#endif
  out.add_(at::matmul(x, weight_columns.t()));
}

namespace {

// a [batch, m, k] times b [batch, k, n] (or b^T with b [batch, n, k]), one sgemm per batch entry.
at::Tensor batched_product(const at::Tensor& a, const at::Tensor& b, bool transpose_b) {
  if (!use_dnnl_fp32(a, b)) return at::matmul(a, transpose_b ? b.transpose(-1, -2) : b);
#ifdef FLASHPS_HAVE_DNNL
  at::Tensor lhs = a.contiguous(), rhs = b.contiguous();
  const int64_t batch = lhs.size(0), m = lhs.size(1), k = lhs.size(2);
  const int64_t n = transpose_b ? rhs.size(1) : rhs.size(2);
  at::Tensor result = at::empty({batch, m, n}, lhs.options());
  const float* pa = lhs.data_ptr<float>();
  const float* pb = rhs.data_ptr<float>();
  float* pc = result.data_ptr<float>();
  for (int64_t i = 0; i < batch; ++i)
    sgemm(transpose_b, m, n, k, pa + i * m * k, k, pb + i * n * k, transpose_b ? k : n, 0.0f,
          pc + i * m * n, n);
  return result;
#endif
}

}  // namespace

at::Tensor batched_matmul_transposed(const at::Tensor& a, const at::Tensor& b) {
  return batched_product(a, b, true);
}

at::Tensor batched_matmul(const at::Tensor& a, const at::Tensor& b) { return batched_product(a, b, false); }

void store_weights_transposed(at::Tensor& weight) {
  if (weight.dim() != 2 || weight.scalar_type() != at::kFloat || !weight.device().is_cpu()) return;
  if (weight.stride(0) == 1 && weight.stride(1) >= weight.size(0)) return;  // already column-major
  at::NoGradGuard no_grad;
  weight.set_data(weight.t().contiguous().t());
}

}  // namespace flashps
