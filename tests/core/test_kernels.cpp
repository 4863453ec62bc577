#include <ATen/ATen.h>

#include <catch2/catch.hpp>

#include "core/kernels/attention.h"
#include "core/kernels/fast_kernels.h"
#include "core/diagnostics/error.h"
#include "core/kernels/linear.h"
#include "models/flux/flux_embeddings.h"

using namespace flashps;

namespace {
double max_difference(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>();
}
}  // namespace

TEST_CASE("linear matches ATen and never writes into its parameters", "[kernels]") {
  auto generator = at::detail::createCPUGenerator(1);
  at::Tensor weight = at::randn({48, 32}, generator), bias = at::randn({48}, generator);
  const at::Tensor bias_before = bias.clone();
  for (int64_t rows : {1, 7, 130}) {
    at::Tensor x = at::randn({rows, 32}, generator);
    CHECK(max_difference(linear(x, weight, bias), at::linear(x, weight, bias)) < 1e-4);
    CHECK(max_difference(linear(x, weight, at::Tensor()), at::linear(x, weight)) < 1e-4);
  }
  // One row: the bias broadcast must be a copy, not the parameter itself.
  CHECK(at::equal(bias, bias_before));
  // A column slice of a wider weight is read in place.
  at::Tensor wide = at::randn({48, 80}, generator);
  at::Tensor x = at::randn({5, 32}, generator);
  CHECK(max_difference(linear(x, wide.narrow(1, 16, 32), bias), at::linear(x, wide.narrow(1, 16, 32).contiguous(), bias)) < 1e-4);
  at::Tensor out = linear(x, wide.narrow(1, 0, 32), bias);
  at::Tensor second = at::randn({5, 48}, generator);
  linear_accumulate(out, second, wide.narrow(1, 32, 48));
  CHECK(max_difference(out, at::linear(at::cat({x, second}, 1), wide, bias)) < 1e-4);
}

TEST_CASE("bf16-weight linear (oneDNN matmul) matches ATen on bf16-rounded inputs", "[kernels]") {
  // The product rounds x to bf16 and accumulates in float32: the reference does the same in
  // float64 from the rounded values, so only summation order differs.
  auto generator = at::detail::createCPUGenerator(4);
  at::Tensor wide = at::randn({48, 80}, generator).to(at::kBFloat16), bias = at::randn({48}, generator);
  auto reference = [](const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
    at::Tensor product = at::matmul(x.to(at::kBFloat16).to(at::kDouble), w.to(at::kDouble).t());
    return b.defined() ? product + b.to(at::kDouble) : product;
  };
  for (int64_t rows : {1, 7, 130}) {
    at::Tensor x = at::randn({rows, 32}, generator);
    const at::Tensor w = wide.narrow(1, 0, 32);  // a column slice, read in place
    at::Tensor with_bias = linear(x, w, bias);
    CHECK(with_bias.scalar_type() == at::kFloat);
    CHECK(max_difference(with_bias, reference(x, w, bias)) < 1e-3);
    CHECK(max_difference(linear(x, w.contiguous(), at::Tensor()), reference(x, w, at::Tensor())) < 1e-3);
    at::Tensor batched = linear(x.view({1, rows, 32}), w, bias);  // leading dimensions kept
    CHECK(batched.sizes() == at::IntArrayRef({1, rows, 48}));
    // Accumulating into a row-strided view of a wider output leaves its other columns alone.
    at::Tensor wider = at::randn({rows, 60}, generator);
    const at::Tensor before = wider.clone();
    at::Tensor view = wider.narrow(1, 4, 48);
    at::Tensor second = at::randn({rows, 48}, generator);
    linear_accumulate(view, second, wide.narrow(1, 32, 48));
    CHECK(max_difference(view, before.narrow(1, 4, 48) + reference(second, wide.narrow(1, 32, 48), at::Tensor())) < 1e-3);
    CHECK(at::equal(wider.narrow(1, 0, 4), before.narrow(1, 0, 4)));
    CHECK(at::equal(wider.narrow(1, 52, 8), before.narrow(1, 52, 8)));
  }
}

TEST_CASE("attention over key parts equals attention over the concatenation", "[kernels]") {
  auto generator = at::detail::createCPUGenerator(2);
  const int64_t heads = 2, width = 32;
  at::Tensor q = at::randn({9, width}, generator);
  std::vector<at::Tensor> keys{at::randn({4, width}, generator), at::randn({11, width}, generator)};
  std::vector<at::Tensor> values{at::randn({4, width}, generator), at::randn({11, width}, generator)};
  at::Tensor k = at::cat(keys), v = at::cat(values);
  // Reference: explicit softmax(QK^T / sqrt(d)) V per head.
  at::Tensor qh = q.view({9, heads, 16}).transpose(0, 1), kh = k.view({15, heads, 16}).transpose(0, 1),
             vh = v.view({15, heads, 16}).transpose(0, 1);
  at::Tensor expected = at::matmul(at::softmax(at::matmul(qh, kh.transpose(1, 2)) / 4.0, -1), vh)
                            .transpose(0, 1)
                            .reshape({9, width});
  CHECK(max_difference(token_major_attention(q, keys, values, heads), expected) < 1e-5);
  CHECK(max_difference(token_major_attention(q, k, v, heads), expected) < 1e-5);
  at::Tensor bf16 = token_major_attention(q.to(at::kBFloat16), k.to(at::kBFloat16), v.to(at::kBFloat16), heads);
  CHECK(bf16.scalar_type() == at::kBFloat16);
  CHECK(max_difference(bf16, expected) < 5e-2);
}

TEST_CASE("attention skips the listed rows of a key part as if they were removed", "[kernels]") {
  auto generator = at::detail::createCPUGenerator(3);
  const int64_t heads = 2, width = 32;
  at::Tensor q = at::randn({7, width}, generator);
  std::vector<at::Tensor> keys{at::randn({5, width}, generator), at::randn({12, width}, generator)};
  std::vector<at::Tensor> values{at::randn({5, width}, generator), at::randn({12, width}, generator)};
  const at::Tensor skipped = at::tensor({0, 4, 5, 11}, at::kLong);
  const at::Tensor kept = at::tensor({1, 2, 3, 6, 7, 8, 9, 10}, at::kLong);
  const std::vector<at::Tensor> kept_keys{keys[0], keys[1].index_select(0, kept)};
  const std::vector<at::Tensor> kept_values{values[0], values[1].index_select(0, kept)};
  const at::Tensor expected = token_major_attention(q, kept_keys, kept_values, heads);
  const std::vector<at::Tensor> skips{at::Tensor(), skipped};
  CHECK(max_difference(token_major_attention(q, keys, values, heads, skips), expected) < 1e-5);
  // Skipping changes the result (the skipped rows are real keys), so the check above can fail.
  CHECK(max_difference(token_major_attention(q, keys, values, heads), expected) > 1e-3);
  SECTION("bf16 inputs") {
    std::vector<at::Tensor> k16{keys[0].to(at::kBFloat16), keys[1].to(at::kBFloat16)};
    std::vector<at::Tensor> v16{values[0].to(at::kBFloat16), values[1].to(at::kBFloat16)};
    CHECK(max_difference(token_major_attention(q.to(at::kBFloat16), k16, v16, heads, skips), expected) < 5e-2);
  }
  SECTION("the ATen path (autograd) skips the same rows") {
    at::Tensor q_grad = q.clone().requires_grad_(true);
    at::Tensor out = token_major_attention(q_grad, keys, values, heads, skips);
    CHECK(out.requires_grad());
    CHECK(max_difference(out.detach(), expected) < 1e-5);
  }
  SECTION("a skipped row outside its part is an error, not a stray write") {
    const std::vector<at::Tensor> bad{at::Tensor(), at::tensor({3, 12}, at::kLong)};
    CHECK_THROWS_WITH(token_major_attention(q, keys, values, heads, bad), Catch::Contains("outside its part"));
  }
}

TEST_CASE("bf16-product attention matches a reference on bf16-rounded operands", "[kernels]") {
  // The same computation in float64: queries scaled then rounded, keys/values rounded, float
  // scores and softmax, probabilities rounded before the weighted sum.
  auto generator = at::detail::createCPUGenerator(6);
  const int64_t heads = 2, width = 64, head_dim = 32;
  at::Tensor q = at::randn({9, width}, generator);
  std::vector<at::Tensor> keys{at::randn({6, width}, generator), at::randn({20, width}, generator).to(at::kBFloat16)};
  std::vector<at::Tensor> values{at::randn({6, width}, generator), at::randn({20, width}, generator).to(at::kBFloat16)};
  const std::vector<at::Tensor> skips{at::Tensor(), at::tensor({2, 3, 19}, at::kLong)};
  const at::Tensor kept = at::tensor({0, 1, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}, at::kLong);
  auto rounded = [](const at::Tensor& x) { return x.to(at::kBFloat16).to(at::kDouble); };
  const at::Tensor k = at::cat({rounded(keys[0]), rounded(keys[1]).index_select(0, kept)});
  const at::Tensor v = at::cat({rounded(values[0]), rounded(values[1]).index_select(0, kept)});
  const at::Tensor qs = rounded(q / std::sqrt(double(head_dim)));
  std::vector<at::Tensor> per_head;
  for (int64_t h = 0; h < heads; ++h) {
    auto columns = [&](const at::Tensor& x) { return x.narrow(1, h * head_dim, head_dim); };
    const at::Tensor p = at::softmax(at::matmul(columns(qs), columns(k).t()).to(at::kFloat), -1);
    per_head.push_back(at::matmul(rounded(p), columns(v)));
  }
  const at::Tensor expected = at::cat(per_head, 1);
  const at::Tensor bf16 = token_major_attention(q, keys, values, heads, skips, /*bf16_products=*/true);
  CHECK(bf16.scalar_type() == at::kFloat);
  CHECK(max_difference(bf16, expected) < 2e-3);
  // Float products on the same (partly bf16) inputs differ by the rounding of q and p.
  const at::Tensor float_products = token_major_attention(q, keys, values, heads, skips);
  CHECK(max_difference(float_products, expected) > max_difference(bf16, expected));
}

TEST_CASE("vectorised GELU and rotary kernels match ATen in fp32 and bf16", "[kernels]") {
  auto generator = at::detail::createCPUGenerator(3);
  at::Tensor x = at::randn({37, 130}, generator) * 4;
  CHECK(max_difference(fast_gelu_tanh(x), at::gelu(x, "tanh")) < 1e-5);
  at::Tensor xb = x.to(at::kBFloat16);
  CHECK(fast_gelu_tanh(xb).scalar_type() == at::kBFloat16);
  CHECK(max_difference(fast_gelu_tanh(xb), at::gelu(xb.to(at::kFloat), "tanh")) < 0.1);

  const int64_t rows = 6, heads = 3, head_dim = 8;
  at::Tensor input = at::randn({rows, heads * head_dim}, generator);
  at::Tensor angles = at::randn({rows, head_dim / 2}, generator);
  at::Tensor cos = at::cos(angles), sin = at::sin(angles);  // one angle per pair
  at::Tensor cos_pairs = cos.repeat_interleave(2, 1), sin_pairs = sin.repeat_interleave(2, 1);
  // Reference: (x0, x1) -> (x0 cos - x1 sin, x1 cos + x0 sin) per pair.
  at::Tensor pairs = input.view({rows, heads, head_dim / 2, 2});
  at::Tensor rotated = at::stack({-pairs.select(3, 1), pairs.select(3, 0)}, 3).view({rows, heads, head_dim});
  at::Tensor expected = (input.view({rows, heads, head_dim}) * cos_pairs.unsqueeze(1) + rotated * sin_pairs.unsqueeze(1))
                            .view({rows, heads * head_dim});
  CHECK(max_difference(fast_rotary(input, cos, sin, heads), expected) < 1e-5);
  CHECK(max_difference(fast_rotary(input.to(at::kBFloat16), cos, sin, heads), expected) < 5e-2);
  CHECK(max_difference(apply_rotary(input.to(at::kDouble), {cos, sin}, heads), expected) < 1e-5);  // ATen path
  CHECK_THROWS_AS(fast_rotary(input, cos_pairs, sin_pairs, heads), Error);  // tables of the wrong width
}

TEST_CASE("row softmax kernel matches ATen", "[kernels]") {
  at::Tensor scores = at::randn({5, 300}, at::detail::createCPUGenerator(4)) * 30;
  at::Tensor expected = at::softmax(scores, -1);
  softmax_rows_inplace(scores.data_ptr<float>(), 5, 300);
  CHECK(max_difference(scores, expected) < 1e-6);
}

TEST_CASE("per-head RMS norm kernel matches the reference on strided input", "[kernels]") {
  auto generator = at::detail::createCPUGenerator(5);
  at::Tensor wide = at::randn({7, 3 * 32}, generator);
  at::Tensor x = wide.narrow(1, 32, 2 * 16);  // two heads of 16, row stride 96
  at::Tensor weight = at::randn({16}, generator);
  at::Tensor heads = x.contiguous().view({7, 2, 16});
  at::Tensor expected = (heads * at::rsqrt(heads.pow(2).mean(-1, true) + 1e-6) * weight).view({7, 32});
  CHECK(max_difference(fast_head_rms_norm(x, weight, 2, 1e-6), expected) < 1e-5);
}

TEST_CASE("linear reads column-major (transposed-storage) weights and their slices", "[kernels]") {
  auto generator = at::detail::createCPUGenerator(6);
  at::Tensor weight = at::randn({24, 40}, generator), bias = at::randn({24}, generator);
  const at::Tensor reference = weight.clone();
  store_weights_transposed(weight);
  CHECK(weight.sizes() == reference.sizes());
  CHECK(weight.stride(0) == 1);
  CHECK(at::equal(weight, reference));
  at::Tensor x = at::randn({9, 40}, generator);
  CHECK(max_difference(linear(x, weight, bias), at::linear(x, reference, bias)) < 1e-4);
  at::Tensor out = linear(x.narrow(1, 0, 16), weight.narrow(1, 0, 16), bias);
  linear_accumulate(out, x.narrow(1, 16, 24), weight.narrow(1, 16, 24));
  CHECK(max_difference(out, at::linear(x, reference, bias)) < 1e-4);
  at::Tensor single_input = at::randn({24, 1}, generator);  // in = 1: never treated as transposed
  store_weights_transposed(single_input);
  CHECK(max_difference(linear(at::ones({2, 1}), single_input, at::Tensor()), single_input.t().expand({2, 24})) < 1e-6);
}
