#include "serve/linear_fit.h"

#include <cmath>

#include "core/diagnostics/error.h"

namespace flashps::serve {

LinearFit fit_linear(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& weights) {
  if (x.size() != y.size() || x.size() != weights.size()) throw Error("linear fit: x, y and weights differ in length");
  double total = 0;
  for (double weight : weights) {
    if (!(weight > 0) || !std::isfinite(weight)) throw Error("linear fit: weights must be positive");
    total += weight;
  }
  double mean_x = 0, mean_y = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    mean_x += weights[i] * x[i] / total;
    mean_y += weights[i] * y[i] / total;
  }
  double sxx = 0, sxy = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxx += weights[i] * (x[i] - mean_x) * (x[i] - mean_x);
    sxy += weights[i] * (x[i] - mean_x) * (y[i] - mean_y);
    syy += weights[i] * (y[i] - mean_y) * (y[i] - mean_y);
  }
  if (x.size() < 2 || !(sxx > 0)) throw Error("linear fit: needs at least two distinct x values");
  LinearFit fit;
  fit.slope = sxy / sxx;
  fit.intercept = mean_y - fit.slope * mean_x;
  double residual = 0;
  for (size_t i = 0; i < x.size(); ++i) residual += weights[i] * std::pow(y[i] - fit(x[i]), 2);
  fit.r2 = syy > 0 ? 1.0 - residual / syy : 1.0;
  fit.samples = static_cast<int>(x.size());
  return fit;
}

LinearFit fit_linear(const std::vector<double>& x, const std::vector<double>& y) {
  return fit_linear(x, y, std::vector<double>(x.size(), 1.0));
}

LinearFit fit_linear_relative(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> weights;
  for (double value : y) {
    if (!(value > 0)) throw Error("linear fit: relative errors need positive y");
    weights.push_back(1.0 / (value * value));
  }
  return fit_linear(x, y, weights);
}

}  // namespace flashps::serve
