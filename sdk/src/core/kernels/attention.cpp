#include "core/kernels/attention.h"

#include "core/kernels/autograd_mode.h"
#include "core/kernels/dnnl_matmul.h"
#include "core/diagnostics/error.h"

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
  for (size_t p = 0; p < key_parts.size(); ++p) {  // one dtype (cached parts may be bf16), stale rows out
    const at::Tensor skipped = p < skipped_rows.size() ? skipped_rows[p] : at::Tensor();
    key_parts[p] = without_rows(key_parts[p].to(q.scalar_type()), skipped);
    value_parts[p] = without_rows(value_parts[p].to(q.scalar_type()), skipped);
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

#ifdef FLASHPS_HAVE_DNNL
namespace {

// The non-empty key/value parts in the product dtype, contiguous, with their skipped rows
// (int64 on the CPU, or undefined), checked against the part's size.
struct KeyValueParts {
  std::vector<at::Tensor> keys, values, skipped;
  int64_t total_keys = 0;
};

KeyValueParts prepare_parts(const std::vector<at::Tensor>& key_parts, const std::vector<at::Tensor>& value_parts,
                            const std::vector<at::Tensor>& skipped_rows, at::ScalarType dtype) {
  KeyValueParts parts;
  for (size_t p = 0; p < key_parts.size(); ++p) {
    if (key_parts[p].size(0) == 0) continue;
    parts.keys.push_back(key_parts[p].to(dtype).contiguous());
    parts.values.push_back(value_parts[p].to(dtype).contiguous());
    const bool skips = p < skipped_rows.size() && skipped_rows[p].defined() && skipped_rows[p].numel() > 0;
    parts.skipped.push_back(skips ? skipped_rows[p].to(at::kCPU, at::kLong).contiguous() : at::Tensor());
    if (skips && (parts.skipped.back().min().item<int64_t>() < 0 ||
                  parts.skipped.back().max().item<int64_t>() >= key_parts[p].size(0)))
      throw Error("attention: a skipped key row lies outside its part of " + std::to_string(key_parts[p].size(0)) +
                  " rows");
    parts.total_keys += key_parts[p].size(0);
  }
  return parts;
}

// Stale rows get zero weight: -inf in their score columns before the softmax.
void mask_skipped(float* scores, int64_t queries, int64_t total_keys, int64_t offset, const at::Tensor& skipped) {
  if (!skipped.defined()) return;
  const int64_t* rows = skipped.data_ptr<int64_t>();
  const int64_t count = skipped.numel();
  for (int64_t i = 0; i < queries; ++i)
    for (int64_t j = 0; j < count; ++j) scores[i * total_keys + offset + rows[j]] = -INFINITY;
}

// float32 products (oneDNN sgemm): strided gemms read one head's columns in place (leading
// dimension = width); each key part fills its own column range of the score matrix.
at::Tensor float_attention(const at::Tensor& q, const KeyValueParts& parts, int64_t heads) {
  const at::Tensor qc = q.to(at::kFloat).contiguous();
  const int64_t sq = qc.size(0), width = qc.size(1), head_dim = width / heads, total = parts.total_keys;
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  at::Tensor out = at::empty({sq, width}, qc.options());
  at::Tensor scores = at::empty({sq, total}, qc.options());
  float* s = scores.data_ptr<float>();
  for (int64_t h = 0; h < heads; ++h) {
    int64_t offset = 0;
    for (size_t part = 0; part < parts.keys.size(); ++part) {
      const at::Tensor& k = parts.keys[part];
      dnnl_sgemm('N', 'T', sq, k.size(0), head_dim, scale, qc.data_ptr<float>() + h * head_dim, width,
                 k.data_ptr<float>() + h * head_dim, width, 0.0f, s + offset, total);
      mask_skipped(s, sq, total, offset, parts.skipped[part]);
      offset += k.size(0);
    }
    at::Tensor probabilities = at::softmax(scores, -1);
    const float* p = probabilities.data_ptr<float>();
    offset = 0;
    for (size_t part = 0; part < parts.values.size(); ++part) {
      const at::Tensor& v = parts.values[part];
      dnnl_sgemm('N', 'N', sq, head_dim, v.size(0), 1.0f, p + offset, total, v.data_ptr<float>() + h * head_dim, width,
                 part == 0 ? 0.0f : 1.0f, out.data_ptr<float>() + h * head_dim, width);
      offset += v.size(0);
    }
  }
  return out;
}

// bfloat16 products (oneDNN matmul), float32 scores, softmax and output; the queries are scaled
// before rounding. Undefined when oneDNN has no native bf16 kernel here.
at::Tensor bf16_attention(const at::Tensor& q, const KeyValueParts& parts, int64_t heads) {
  const int64_t sq = q.size(0), width = q.size(1), head_dim = width / heads, total = parts.total_keys;
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  const at::Tensor qb = (q.to(at::kFloat) * scale).to(at::kBFloat16).contiguous();
  const auto* queries = static_cast<const at::BFloat16*>(qb.data_ptr());
  at::Tensor out = at::empty({sq, width}, q.options().dtype(at::kFloat));
  at::Tensor scores = at::empty({sq, total}, out.options());
  float* s = scores.data_ptr<float>();
  for (int64_t h = 0; h < heads; ++h) {
    int64_t offset = 0;
    for (size_t part = 0; part < parts.keys.size(); ++part) {
      const at::Tensor& k = parts.keys[part];
      // scores[:, part] = q_h [sq, d] @ k_h^T: k's head columns read as a [d, rows] operand.
      if (!dnnl_bf16_gemm(sq, head_dim, k.size(0), queries + h * head_dim, width,
                          static_cast<const at::BFloat16*>(k.data_ptr()) + h * head_dim, 1, width, s + offset, total,
                          false))
        return {};
      mask_skipped(s, sq, total, offset, parts.skipped[part]);
      offset += k.size(0);
    }
    const at::Tensor probabilities = at::softmax(scores, -1).to(at::kBFloat16);
    const auto* p = static_cast<const at::BFloat16*>(probabilities.data_ptr());
    offset = 0;
    for (size_t part = 0; part < parts.values.size(); ++part) {
      const at::Tensor& v = parts.values[part];
      if (!dnnl_bf16_gemm(sq, v.size(0), head_dim, p + offset, total,
                          static_cast<const at::BFloat16*>(v.data_ptr()) + h * head_dim, width, 1,
                          out.data_ptr<float>() + h * head_dim, width, part > 0))
        return {};
      offset += v.size(0);
    }
  }
  return out;
}

}  // namespace
#endif

at::Tensor token_major_attention(const at::Tensor& q, const std::vector<at::Tensor>& key_parts,
                                 const std::vector<at::Tensor>& value_parts, int64_t heads,
                                 const std::vector<at::Tensor>& skipped_rows, bool bf16_products) {
#ifdef FLASHPS_HAVE_DNNL
  const bool cpu = q.device().is_cpu() &&
                   (q.scalar_type() == at::kFloat || q.scalar_type() == at::kBFloat16);
  bool differentiable = needs_autograd(q);
  for (size_t p = 0; p < key_parts.size(); ++p) differentiable |= needs_autograd(key_parts[p], value_parts[p]);
  if (cpu && !differentiable) {
    if (bf16_products) {
      at::Tensor out = bf16_attention(q, prepare_parts(key_parts, value_parts, skipped_rows, at::kBFloat16), heads);
      if (out.defined()) return out.to(q.scalar_type());
    }
    // bf16 inputs are otherwise widened: fp32 sgemm is fast here and keeps softmax inputs exact.
    return float_attention(q, prepare_parts(key_parts, value_parts, skipped_rows, at::kFloat), heads)
        .to(q.scalar_type());
  }
#endif
  (void)bf16_products;
  return aten_attention(q, key_parts, value_parts, heads, skipped_rows);
}

}  // namespace flashps
