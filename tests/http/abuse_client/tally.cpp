#include "tally.h"

#include <algorithm>
#include <cmath>

namespace abuse {

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(p * double(values.size()));
  const size_t index = std::min(values.size() - 1, size_t(std::max(1.0, rank)) - 1);
  return values[index];
}

json latency_summary(const std::vector<double>& values) {
  return {{"count", values.size()},
          {"p50", percentile(values, 0.5)},
          {"p95", percentile(values, 0.95)},
          {"max", values.empty() ? 0.0 : *std::max_element(values.begin(), values.end())}};
}

json Tally::errors() const {
  json errors = json::object();
  for (const auto& [outcome, count] : outcomes())
    if (outcome != "ok") errors[outcome] = count;
  return errors;
}

}  // namespace abuse
