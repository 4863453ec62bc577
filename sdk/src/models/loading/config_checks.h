// A model folder's config.json is untrusted input: every size field is checked against bounds,
// then against the shapes in the weights' safetensors headers, before any module is allocated
// from it (a config claiming 1e9 layers fails at once, naming the field, not in std::bad_alloc).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace flashps {

class SafetensorsFile;
class CheckpointTensors;

// Throws CorruptDataError "<source>: <field> is <value>; it must be <min> to <max>".
void require_config_range(const std::string& source, const std::string& field, int64_t value, int64_t min, int64_t max);

// The tensor names and shapes of a component's weights files (headers only, no tensor data).
class WeightShapes {
 public:
  explicit WeightShapes(const std::vector<const SafetensorsFile*>& files);
  explicit WeightShapes(const CheckpointTensors& weights);

  // Throws CorruptDataError when `tensor` is stored with another shape than the config `fields`
  // imply, naming the config, the fields, the weights file and both shapes. An absent tensor
  // passes: the strict loader names every missing key.
  void require_shape(const std::string& config_source, const std::string& fields, const std::string& tensor,
                     const std::vector<int64_t>& implied) const;

  // Throws CorruptDataError unless the weights hold exactly `expected` numbered blocks
  // "<prefix>.<i>.*" (i = 0 .. expected - 1), naming the config field and both counts.
  void require_block_count(const std::string& config_source, const std::string& field, int64_t expected,
                           const std::string& prefix) const;

 private:
  std::string source_;                                                          // the weights files, for errors
  std::map<std::string, std::pair<std::string, std::vector<int64_t>>> shapes_;  // name -> (file, shape)
};

}  // namespace flashps
