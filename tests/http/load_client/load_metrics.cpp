#include "load_metrics.h"

#include "metrics_text.h"

namespace load_client {

// ---------------------------------------------------------------- metrics

std::map<std::string, double> read_metrics(const Run& run, bool* ok) {
  auto client = make_client(run, 30);
  httplib::Result result = client->Get("/metrics");
  *ok = result && result->status == 200;
  return *ok ? parse_metrics_text(result->body) : std::map<std::string, double>{};
}

double metric(const std::map<std::string, double>& values, const std::string& name) { return metric_value(values, name); }

std::string outcome_metric(const std::string& outcome) { return "flashps_edits_total{outcome=\"" + outcome + "\"}"; }

// ---------------------------------------------------------------- the summary

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t index = std::min(values.size() - 1, size_t(std::ceil(p * double(values.size())) - 1));
  return values[index];
}


}  // namespace load_client
