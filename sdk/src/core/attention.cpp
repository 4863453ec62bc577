#include "core/attention.h"

#include <ATen/ATen.h>
#include <torch/version.h>

#include <cmath>

#ifdef FLASHPS_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

namespace flashps {
namespace {

at::Tensor aten_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          int64_t heads) {
  const int64_t head_dim = q.size(1) / heads;
  auto to_heads = [&](const at::Tensor& x) {
    return x.view({x.size(0), heads, head_dim}).transpose(0, 1);  // [heads, S, head_dim]
  };
#if TORCH_VERSION_MAJOR >= 2
  at::Tensor out = at::scaled_dot_product_attention(to_heads(q).unsqueeze(0),
                                                    to_heads(k).unsqueeze(0),
                                                    to_heads(v).unsqueeze(0))
                       .squeeze(0);
#else
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  at::Tensor scores = at::matmul(to_heads(q), to_heads(k).transpose(1, 2)) * scale;
  at::Tensor probabilities = at::softmax(scores, -1, at::kFloat).to(q.scalar_type());
  at::Tensor out = at::matmul(probabilities, to_heads(v));
#endif
  return out.transpose(0, 1).reshape({q.size(0), heads * head_dim});
}

}  // namespace

at::Tensor token_major_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                 int64_t heads) {
#ifdef FLASHPS_HAVE_DNNL
  if (q.device().is_cpu() && q.scalar_type() == at::kFloat) {
    at::Tensor qc = q.contiguous(), kc = k.contiguous(), vc = v.contiguous();
    const int64_t sq = qc.size(0), sk = kc.size(0), width = qc.size(1);
    const int64_t head_dim = width / heads;
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    at::Tensor out = at::empty({sq, width}, qc.options());
    at::Tensor scores = at::empty({sq, sk}, qc.options());
    for (int64_t h = 0; h < heads; ++h) {
      // Strided gemms read one head's columns in place (leading dimension = width).
      dnnl_sgemm('N', 'T', sq, sk, head_dim, scale, qc.data_ptr<float>() + h * head_dim, width,
                 kc.data_ptr<float>() + h * head_dim, width, 0.0f, scores.data_ptr<float>(), sk);
      at::Tensor probabilities = at::softmax(scores, -1);
      dnnl_sgemm('N', 'N', sq, head_dim, sk, 1.0f, probabilities.data_ptr<float>(), sk,
                 vc.data_ptr<float>() + h * head_dim, width, 0.0f,
                 out.data_ptr<float>() + h * head_dim, width);
    }
    return out;
  }
#endif
  return aten_attention(q, k, v, heads);
}

}  // namespace flashps
