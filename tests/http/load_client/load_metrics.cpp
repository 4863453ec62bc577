#include "load_metrics.h"

namespace load_client {

// ---------------------------------------------------------------- metrics

std::map<std::string, double> read_metrics(const Run& run, bool* ok) {
  std::map<std::string, double> values;
  auto client = make_client(run, 30);
  httplib::Result result = client->Get("/metrics");
  *ok = result && result->status == 200;
  if (!*ok) return values;
  std::istringstream lines(result->body);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    try {
      values[line.substr(0, space)] = std::stod(line.substr(space + 1));
    } catch (const std::exception&) {
    }
  }
  return values;
}

double metric(const std::map<std::string, double>& values, const std::string& name) {
  const auto found = values.find(name);
  return found == values.end() ? 0 : found->second;
}

std::string outcome_metric(const std::string& outcome) { return "flashps_edits_total{outcome=\"" + outcome + "\"}"; }

// ---------------------------------------------------------------- the summary

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t index = std::min(values.size() - 1, size_t(std::ceil(p * double(values.size())) - 1));
  return values[index];
}


}  // namespace load_client
