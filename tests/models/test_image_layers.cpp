// The leaf image layers shared by the VAE and the UNet: GroupNorm's statistics in the layouts and
// dtypes where LibTorch's own kernel loses them, and the convolution's counted FLOPs.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>

#include "core/diagnostics/phase_profile.h"
#include "models/common/image_layers.h"

namespace {

using flashps::GroupNormLayer;

// GroupNorm in float64 of the (already rounded) input: the reference for every layout and dtype.
at::Tensor reference_group_norm(const at::Tensor& input, const GroupNormLayer& layer) {
  const auto parameters = layer.named_parameters();
  return at::group_norm(input.to(at::kDouble).contiguous(), layer.groups(), parameters["weight"].to(at::kDouble),
                        parameters["bias"].to(at::kDouble), 1e-6);
}

GroupNormLayer layer_with_affine(int64_t groups, int64_t channels) {
  GroupNormLayer layer(groups, channels, 1e-6);
  at::manual_seed(5);
  auto parameters = layer.named_parameters();
  parameters["weight"].copy_(1 + 0.1 * at::randn({channels}));
  parameters["bias"].copy_(0.1 * at::randn({channels}));
  return layer;
}

double max_error(const at::Tensor& actual, const at::Tensor& expected) {
  return (actual.to(at::kDouble) - expected).abs().max().item<double>();
}

}  // namespace

TEST_CASE("GroupNormLayer keeps its statistics when a group's mean dwarfs its spread", "[layers][group_norm]") {
  const GroupNormLayer layer = layer_with_affine(8, 32);
  at::manual_seed(11);
  // Per-channel offsets around 100 with spread 0.5: one-pass E[x^2] - E[x]^2 cancels here.
  const at::Tensor input = 100 + at::randn({2, 32, 1, 1}) + 0.5 * at::randn({2, 32, 24, 20});
  const at::Tensor expected = reference_group_norm(input, layer);
  for (const auto format : {at::MemoryFormat::Contiguous, at::MemoryFormat::ChannelsLast}) {
    const at::Tensor output = layer.forward(input.contiguous(format));
    CHECK(output.is_contiguous(format));
    CHECK(output.scalar_type() == at::kFloat);
    CHECK(max_error(output, expected) < 1e-4);
  }
}

TEST_CASE("GroupNormLayer normalises bf16 activations with float32 statistics", "[layers][group_norm]") {
  const GroupNormLayer layer = layer_with_affine(4, 16);
  at::manual_seed(12);
  for (const double offset : {0.0, 3.0}) {
    const at::Tensor input = (offset + at::randn({1, 16, 32, 32})).to(at::kBFloat16);
    const at::Tensor expected = reference_group_norm(input, layer);  // of the rounded input
    for (const auto format : {at::MemoryFormat::Contiguous, at::MemoryFormat::ChannelsLast}) {
      const at::Tensor output = layer.forward(input.contiguous(format));
      CHECK(output.scalar_type() == at::kBFloat16);
      CHECK(output.is_contiguous(format));
      // Only the output's own rounding is left: half a bf16 step of values up to about 5.
      CHECK(max_error(output, expected) < 0.02);
    }
  }
}

TEST_CASE("GroupNormLayer fuses the SiLU after it, in every layout and for any trailing shape", "[layers][group_norm]") {
  const GroupNormLayer layer = layer_with_affine(4, 12);
  at::manual_seed(13);
  const at::Tensor image = 2 + at::randn({3, 12, 7, 9});
  const at::Tensor expected = at::silu(reference_group_norm(image, layer));
  for (const auto format : {at::MemoryFormat::Contiguous, at::MemoryFormat::ChannelsLast}) {
    CHECK(max_error(layer.forward_silu(image.contiguous(format)), expected) < 1e-5);
    CHECK(max_error(layer.forward_silu(image.to(at::kBFloat16).contiguous(format)),
                    at::silu(reference_group_norm(image.to(at::kBFloat16), layer))) < 0.02);
  }
  const at::Tensor tokens = image.flatten(2);  // [B, C, N]
  CHECK(max_error(layer.forward_silu(tokens), expected.flatten(2)) < 1e-5);
  CHECK(max_error(layer.forward(tokens), reference_group_norm(image, layer).flatten(2)) < 1e-5);
  // A strided view is read as its values, not its storage.
  const at::Tensor every_other = image.slice(3, 0, 9, 2);
  CHECK(max_error(layer.forward(every_other), reference_group_norm(every_other, layer)) < 1e-5);
}

TEST_CASE("GroupNormLayer refuses channels that do not split into its groups", "[layers][group_norm]") {
  const GroupNormLayer layer(4, 12, 1e-6);
  CHECK_THROWS_WITH(layer.forward(at::randn({1, 10, 4, 4})), Catch::Contains("10 channels do not split into 4 groups"));
}

TEST_CASE("Conv2dLayer counts its FLOPs for the phase profiler", "[layers][phase_profile]") {
  flashps::Conv2dLayer conv(3, 8, 3, /*stride=*/2, /*padding=*/1);
  for (auto& parameter : conv.parameters()) parameter.normal_();
  flashps::PhaseTotals totals;
  {
    flashps::PhaseRecording recording(&totals);
    conv.forward(at::randn({2, 3, 9, 10}));
  }
  // Output 5 x 5 per image (stride 2, padding 1), each a 3 x 3 x 3 dot product per output channel.
  const int convolution = static_cast<int>(flashps::Phase::convolution);
  CHECK(totals.flops[convolution] == Approx(2.0 * 2 * 8 * 5 * 5 * 3 * 3 * 3));
  CHECK(totals.seconds[convolution] > 0);
  // Without a recording nothing is counted anywhere.
  conv.forward(at::randn({1, 3, 4, 4}));
  CHECK(totals.flops[convolution] == Approx(2.0 * 2 * 8 * 5 * 5 * 3 * 3 * 3));
}
