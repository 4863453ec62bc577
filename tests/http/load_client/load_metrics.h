// The server's /metrics as numbers, and percentiles of the client's latencies.
#pragma once
#include "load_run.h"

namespace load_client {

std::map<std::string, double> read_metrics(const Run& run, bool* ok);
double metric(const std::map<std::string, double>& values, const std::string& name);
std::string outcome_metric(const std::string& outcome);
double percentile(std::vector<double> values, double p);

}  // namespace load_client
