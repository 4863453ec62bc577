// Training and benchmark masks: the requested area, reproducible from the generator, and areas
// drawn from the real mask-ratio traces.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "core/diagnostics/error.h"
#include "support/temp_dir.h"
#include "workload/mask_ratio_trace.h"
#include "workload/random_masks.h"

using namespace flashps;
using namespace flashps::workload;

TEST_CASE("random masks cover about the requested area with every shape", "[workload][masks]") {
  for (MaskShape shape : {MaskShape::brush, MaskShape::blob, MaskShape::box, MaskShape::any}) {
    for (double target : {0.03, 0.1, 0.3, 0.6}) {
      std::mt19937_64 rng(42);
      at::Tensor mask = random_mask(96, 128, target, rng, shape);
      REQUIRE(mask.sizes() == at::IntArrayRef({96, 128}));
      const double ratio = mask.mean().item<double>();
      INFO("shape " << static_cast<int>(shape) << " target " << target << " got " << ratio);
      CHECK(ratio >= target);
      CHECK(ratio <= target + 0.2);
      CHECK(at::logical_or(mask == 0, mask == 1).all().item<bool>());
    }
  }
}

TEST_CASE("random masks are reproducible from the generator state", "[workload][masks]") {
  std::mt19937_64 first(7), second(7), other(8);
  at::Tensor a = random_mask(64, 64, 0.2, first);
  at::Tensor b = random_mask(64, 64, 0.2, second);
  at::Tensor c = random_mask(64, 64, 0.2, other);
  CHECK(at::equal(a, b));
  CHECK_FALSE(at::equal(a, c));
}

TEST_CASE("mask-ratio traces load, sample within bounds and reject bad files", "[workload][masks]") {
  test::TempDir scratch;
  const std::string good = scratch.file("good.csv"), bad = scratch.file("bad.csv"), headless = scratch.file("x.csv");
  std::ofstream(good) << "mask_ratio\n0.1\n0.5\n0.95\n";
  std::ofstream(bad) << "mask_ratio\n0.1\nlots\n";
  std::ofstream(headless) << "0.1\n0.2\n";
  MaskRatioTrace trace = MaskRatioTrace::load({good});
  REQUIRE(trace.ratios().size() == 3);
  std::mt19937_64 rng(1);
  for (int i = 0; i < 50; ++i) {
    const double ratio = trace.sample(rng, 0.02, 0.8);
    CHECK(ratio >= 0.02);
    CHECK(ratio <= 0.8);
  }
  CHECK_THROWS_WITH(MaskRatioTrace::load({bad}), Catch::Contains("bad.csv:3"));
  CHECK_THROWS_WITH(MaskRatioTrace::load({headless}), Catch::Contains("x.csv") && Catch::Contains("header"));
  CHECK_THROWS_WITH(MaskRatioTrace::load({scratch.file("none.csv")}), Catch::Contains("none.csv"));
}
