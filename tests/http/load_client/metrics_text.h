// The server's /metrics text (Prometheus exposition) read into name -> value, for the load and the
// abuse clients alike: a sample's name with its labels ("flashps_edits_total{outcome=\"done\"}").
#pragma once
#include <map>
#include <string>

std::map<std::string, double> parse_metrics_text(const std::string& text);
// A sample's value; 0 when absent (counters the server has not exposed yet).
double metric_value(const std::map<std::string, double>& values, const std::string& name);
