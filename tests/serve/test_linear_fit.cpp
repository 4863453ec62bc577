#include <catch2/catch.hpp>

#include "core/diagnostics/error.h"
#include "serve/linear_fit.h"

using namespace flashps::serve;

TEST_CASE("linear fits: exact lines are recovered; relative fits weigh small points as much as large",
          "[serve][profile]") {
  const std::vector<double> x{1, 2, 4, 8, 100};
  std::vector<double> y;
  for (double value : x) y.push_back(0.5 + 2 * value);
  for (const LinearFit& fit : {fit_linear(x, y), fit_linear_relative(x, y)}) {
    CHECK(fit.slope == Approx(2));
    CHECK(fit.intercept == Approx(0.5));
    CHECK(fit.r2 == Approx(1));
    CHECK(fit.samples == 5);
  }
  // The largest point 20% slower than the line: plain least squares bends to it and predicts the
  // small points badly (here a negative intercept); the relative fit keeps them within 10%.
  y.back() *= 1.2;
  const LinearFit plain = fit_linear(x, y), relative = fit_linear_relative(x, y);
  CHECK(plain.intercept < 0);
  for (size_t i = 0; i + 1 < x.size(); ++i) CHECK(std::abs(relative(x[i]) / y[i] - 1) < 0.1);
  CHECK(std::abs(plain(x[0]) / y[0] - 1) > 0.2);
  CHECK_THROWS_WITH(fit_linear(x, y, {1, 1, 1, 1, 0}), Catch::Contains("positive"));
  CHECK_THROWS_WITH(fit_linear({1, 1}, {2, 3}), Catch::Contains("distinct"));
  CHECK_THROWS_WITH(fit_linear_relative({1, 2}, {0, 3}), Catch::Contains("positive y"));
}
