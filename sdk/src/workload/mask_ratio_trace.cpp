#include "workload/mask_ratio_trace.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/diagnostics/error.h"

namespace flashps::workload {

MaskRatioTrace MaskRatioTrace::load(const std::vector<std::string>& csv_paths) {
  MaskRatioTrace trace;
  for (const std::string& path : csv_paths) {
    std::ifstream in(path);
    if (!in) throw Error(path + ": cannot open mask-ratio trace");
    std::string line;
    if (!std::getline(in, line) || line.rfind("mask_ratio", 0) != 0)
      throw Error(path + ": expected a CSV with a 'mask_ratio' header");
    int line_number = 1;
    while (std::getline(in, line)) {
      ++line_number;
      if (line.empty() || line == "\r") continue;
      char* end = nullptr;
      const double value = std::strtod(line.c_str(), &end);
      if (end == line.c_str() || !(value >= 0.0 && value <= 1.0))
        throw Error(path + ":" + std::to_string(line_number) + ": mask_ratio must be a number in [0, 1]");
      trace.ratios_.push_back(value);
    }
  }
  if (trace.ratios_.empty()) throw Error("mask-ratio traces hold no values");
  return trace;
}

MaskRatioTrace MaskRatioTrace::fallback() {
  MaskRatioTrace trace;
  for (int i = 0; i <= 100; ++i) trace.ratios_.push_back(0.03 + 0.47 * i / 100.0);
  return trace;
}

double MaskRatioTrace::sample(std::mt19937_64& rng, double min_ratio, double max_ratio) const {
  std::uniform_int_distribution<size_t> pick(0, ratios_.size() - 1);
  return std::clamp(ratios_[pick(rng)], min_ratio, max_ratio);
}

std::string default_traces_directory(const std::string& source_dir) {
  namespace fs = std::filesystem;
  const char* shared = std::getenv("FLASHPS_SHARED_DIR");
  return ((shared ? fs::path(shared) : fs::path(source_dir) / ".." / "shared") / "traces").string();
}

std::vector<std::string> default_trace_files(const std::string& source_dir) {
  namespace fs = std::filesystem;
  const fs::path traces = default_traces_directory(source_dir);
  std::vector<std::string> files;
  if (fs::is_directory(traces))
    for (const auto& entry : fs::directory_iterator(traces))
      if (entry.path().extension() == ".csv") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace flashps::workload
