#include "core/attention.h"

#include "core/autograd_mode.h"
#include "core/error.h"

#include <ATen/ATen.h>

#include <cmath>

#ifdef FLASHPS_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

// LibTorch 2.x has the public fused at::scaled_dot_product_attention (1.13 only the private
// _scaled_dot_product_attention): detected by its operator header, not by version number.
#if __has_include(<ATen/ops/scaled_dot_product_attention.h>)
#define FLASHPS_HAVE_SDPA 1
#endif

namespace flashps {
namespace {

// The rows of `part` not listed in `skipped` (sorted or not).
at::Tensor without_rows(const at::Tensor& part, const at::Tensor& skipped) {
  if (!skipped.defined() || skipped.numel() == 0) return part;
  at::Tensor keep = at::ones({part.size(0)}, at::TensorOptions().dtype(at::kBool).device(part.device()));
  keep.index_fill_(0, skipped.to(part.device(), at::kLong), false);
  return part.index_select(0, keep.nonzero().view({-1}));
}

at::Tensor aten_attention(const at::Tensor& q, std::vector<at::Tensor> key_parts,
                          std::vector<at::Tensor> value_parts, int64_t heads,
                          const std::vector<at::Tensor>& skipped_rows) {
  for (size_t p = 0; p < skipped_rows.size() && p < key_parts.size(); ++p) {
    key_parts[p] = without_rows(key_parts[p], skipped_rows[p]);
    value_parts[p] = without_rows(value_parts[p], skipped_rows[p]);
  }
  at::Tensor k = key_parts.size() == 1 ? key_parts[0] : at::cat(key_parts, 0);
  at::Tensor v = value_parts.size() == 1 ? value_parts[0] : at::cat(value_parts, 0);
  const int64_t head_dim = q.size(1) / heads;
  auto to_heads = [&](const at::Tensor& x) {
    return x.view({x.size(0), heads, head_dim}).transpose(0, 1);  // [heads, S, head_dim]
  };
#ifdef FLASHPS_HAVE_SDPA
  at::Tensor out = at::scaled_dot_product_attention(to_heads(q).unsqueeze(0), to_heads(k).unsqueeze(0),
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

at::Tensor token_major_attention(const at::Tensor& q, const std::vector<at::Tensor>& key_parts,
                                 const std::vector<at::Tensor>& value_parts, int64_t heads,
                                 const std::vector<at::Tensor>& skipped_rows) {
#ifdef FLASHPS_HAVE_DNNL
  const bool cpu = q.device().is_cpu() &&
                   (q.scalar_type() == at::kFloat || q.scalar_type() == at::kBFloat16);
  bool differentiable = needs_autograd(q);
  for (size_t p = 0; p < key_parts.size(); ++p) differentiable |= needs_autograd(key_parts[p], value_parts[p]);
  if (cpu && !differentiable) {
    // bf16 inputs are widened: fp32 sgemm is fast here and keeps softmax inputs exact.
    auto as_float = [](const at::Tensor& x) { return x.to(at::kFloat).contiguous(); };
    at::Tensor qc = as_float(q);
    std::vector<at::Tensor> keys, values, skipped;  // skipped: int64 on the CPU, or undefined
    int64_t total_keys = 0;
    for (size_t p = 0; p < key_parts.size(); ++p) {
      if (key_parts[p].size(0) == 0) continue;
      keys.push_back(as_float(key_parts[p]));
      values.push_back(as_float(value_parts[p]));
      const bool skips = p < skipped_rows.size() && skipped_rows[p].defined() && skipped_rows[p].numel() > 0;
      skipped.push_back(skips ? skipped_rows[p].to(at::kLong).contiguous() : at::Tensor());
      if (skips && (skipped.back().min().item<int64_t>() < 0 ||
                    skipped.back().max().item<int64_t>() >= key_parts[p].size(0)))
        throw Error("attention: a skipped key row lies outside its part of " +
                    std::to_string(key_parts[p].size(0)) + " rows");
      total_keys += key_parts[p].size(0);
    }
    const int64_t sq = qc.size(0), width = qc.size(1), head_dim = width / heads;
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    at::Tensor out = at::empty({sq, width}, qc.options());
    at::Tensor scores = at::empty({sq, total_keys}, qc.options());
    float* s = scores.data_ptr<float>();
    for (int64_t h = 0; h < heads; ++h) {
      // Strided gemms read one head's columns in place (leading dimension = width); each key
      // part fills its own column range of the score matrix.
      int64_t offset = 0;
      for (size_t part = 0; part < keys.size(); ++part) {
        const at::Tensor& k = keys[part];
        dnnl_sgemm('N', 'T', sq, k.size(0), head_dim, scale, qc.data_ptr<float>() + h * head_dim, width,
                   k.data_ptr<float>() + h * head_dim, width, 0.0f, s + offset, total_keys);
        if (skipped[part].defined()) {  // stale rows get zero weight: -inf before the softmax
          const int64_t* rows = skipped[part].data_ptr<int64_t>();
          const int64_t count = skipped[part].numel();
          for (int64_t i = 0; i < sq; ++i)
            for (int64_t j = 0; j < count; ++j) s[i * total_keys + offset + rows[j]] = -INFINITY;
        }
        offset += k.size(0);
      }
      at::Tensor probabilities = at::softmax(scores, -1);
      const float* p = probabilities.data_ptr<float>();
      offset = 0;
      for (size_t part = 0; part < values.size(); ++part) {
        const at::Tensor& v = values[part];
        dnnl_sgemm('N', 'N', sq, head_dim, v.size(0), 1.0f, p + offset, total_keys,
                   v.data_ptr<float>() + h * head_dim, width, part == 0 ? 0.0f : 1.0f,
                   out.data_ptr<float>() + h * head_dim, width);
        offset += v.size(0);
      }
    }
    return out.to(q.scalar_type());
  }
#endif
  return aten_attention(q, key_parts, value_parts, heads, skipped_rows);
}

}  // namespace flashps
