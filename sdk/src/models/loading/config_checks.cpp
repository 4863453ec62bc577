#include "models/loading/config_checks.h"

#include <cctype>
#include <set>
#include <sstream>

#include "core/diagnostics/error.h"
#include "core/files/safetensors.h"
#include "models/loading/checkpoint_tensors.h"

namespace flashps {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << "]";
  return out.str();
}

}  // namespace

void require_config_range(const std::string& source, const std::string& field, int64_t value, int64_t min,
                          int64_t max) {
  if (value < min || value > max)
    throw CorruptDataError(source + ": " + field + " is " + std::to_string(value) + "; it must be " +
                           std::to_string(min) + " to " + std::to_string(max));
}

WeightShapes::WeightShapes(const std::vector<const SafetensorsFile*>& files) {
  for (const SafetensorsFile* file : files) {
    source_ += (source_.empty() ? "" : ", ") + file->source_name();
    for (const TensorInfo& info : file->tensors()) shapes_[info.name] = {file->source_name(), info.shape};
  }
}

WeightShapes::WeightShapes(const CheckpointTensors& weights) : source_(weights.source()) {
  for (const auto& [key, entry] : weights.entries()) shapes_[key] = {entry.origin, entry.shape};
}

void WeightShapes::require_shape(const std::string& config_source, const std::string& fields, const std::string& tensor,
                                 const std::vector<int64_t>& implied) const {
  const auto found = shapes_.find(tensor);
  if (found == shapes_.end() || found->second.second == implied) return;
  throw CorruptDataError(config_source + ": the weights disagree with " + fields + ": " + found->second.first +
                         " has " + tensor + " " + shape_text(found->second.second) + ", the config implies " +
                         shape_text(implied));
}

void WeightShapes::require_block_count(const std::string& config_source, const std::string& field, int64_t expected,
                                       const std::string& prefix) const {
  const std::string head = prefix + ".";
  std::set<int64_t> indices;
  for (auto it = shapes_.lower_bound(head); it != shapes_.end() && it->first.compare(0, head.size(), head) == 0; ++it) {
    size_t end = head.size();
    while (end < it->first.size() && std::isdigit(static_cast<unsigned char>(it->first[end]))) ++end;
    if (end == head.size() || end - head.size() > 9 || end >= it->first.size() || it->first[end] != '.') continue;
    indices.insert(std::stoll(it->first.substr(head.size(), end - head.size())));
  }
  const bool contiguous =
      indices.empty() || (*indices.begin() == 0 && *indices.rbegin() + 1 == int64_t(indices.size()));
  if (int64_t(indices.size()) == expected && contiguous) return;
  throw CorruptDataError(config_source + ": " + field + " is " + std::to_string(expected) + " but " + source_ +
                         " holds " + std::to_string(indices.size()) + " " + prefix + " (" + head + "N.*)");
}

}  // namespace flashps
