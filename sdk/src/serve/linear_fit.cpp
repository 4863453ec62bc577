#include "serve/linear_fit.h"

#include <cmath>

#include "core/error.h"

namespace flashps::serve {

LinearFit fit_linear(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) throw Error("linear fit: x and y differ in length");
  const double n = double(x.size());
  double mean_x = 0, mean_y = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    mean_x += x[i] / n;
    mean_y += y[i] / n;
  }
  double sxx = 0, sxy = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - mean_x) * (x[i] - mean_x);
    sxy += (x[i] - mean_x) * (y[i] - mean_y);
    syy += (y[i] - mean_y) * (y[i] - mean_y);
  }
  if (x.size() < 2 || !(sxx > 0)) throw Error("linear fit: needs at least two distinct x values");
  LinearFit fit;
  fit.slope = sxy / sxx;
  fit.intercept = mean_y - fit.slope * mean_x;
  double residual = 0;
  for (size_t i = 0; i < x.size(); ++i) residual += std::pow(y[i] - fit(x[i]), 2);
  fit.r2 = syy > 0 ? 1.0 - residual / syy : 1.0;
  fit.samples = static_cast<int>(x.size());
  return fit;
}

}  // namespace flashps::serve
