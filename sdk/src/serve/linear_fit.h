// Least-squares straight line y = slope * x + intercept with its coefficient of determination:
// the per-device latency models of the scheduler (FlashPS §4.4, Fig. 11).
#pragma once
#include <vector>

namespace flashps::serve {

struct LinearFit {
  double slope = 0, intercept = 0;
  double r2 = 1;     // of the fitted samples; 1 for models given as constants
  int samples = 0;
  double operator()(double x) const { return slope * x + intercept; }
};

// Fits y on x; needs at least two distinct x values (Error otherwise). A negative intercept is
// kept: it is what the data says, and predictions are clamped at zero by callers.
LinearFit fit_linear(const std::vector<double>& x, const std::vector<double>& y);
// Weighted least squares (weights > 0; R² in the same weighting). Weights 1/y² fit relative
// errors: step times that span 100x are then fitted as well at the small end as at the large,
// where plain least squares lets the largest points decide (and can give a negative intercept).
LinearFit fit_linear(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& weights);
LinearFit fit_linear_relative(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace flashps::serve
