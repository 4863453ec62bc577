// Mask-area distributions from real editing traces (../shared/traces/*.csv: one column,
// mask_ratio = masked area / image area). Training masks and quality benchmarks draw their
// areas from these, so the model is trained and judged on the edit sizes users make.
#pragma once
#include <random>
#include <string>
#include <vector>

namespace flashps::workload {

class MaskRatioTrace {
 public:
  // Reads one or more CSV files with a "mask_ratio" header; throws Error naming the file on a
  // missing header, a non-numeric value or a value outside [0, 1].
  static MaskRatioTrace load(const std::vector<std::string>& csv_paths);
  // A fixed spread (uniform in [0.03, 0.5]) for when no trace files are available.
  static MaskRatioTrace fallback();

  // One ratio drawn uniformly from the pooled samples, clamped to [min_ratio, max_ratio].
  double sample(std::mt19937_64& rng, double min_ratio = 0.02, double max_ratio = 0.8) const;
  const std::vector<double>& ratios() const { return ratios_; }

 private:
  std::vector<double> ratios_;
};

// <shared>/traces, where <shared> is FLASHPS_SHARED_DIR or ../shared next to the source tree.
std::string default_traces_directory(const std::string& source_dir);
// The CSV files there; empty when none is found.
std::vector<std::string> default_trace_files(const std::string& source_dir);

}  // namespace flashps::workload
