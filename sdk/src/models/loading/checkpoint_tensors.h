// The tensors a model loads, named by the model's own keys, whatever file holds them: diffusers
// safetensors (the keys as stored), GGUF files (decoded from their quantized blocks), or another
// key layout seen through a table (key_layout.h). The strict loader (weights.h) and the config
// checks (config_checks.h) read weights only through this interface.
#pragma once
#include <ATen/Tensor.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace flashps {

class SafetensorsFile;
class GgufFile;

struct CheckpointEntry {
  std::vector<int64_t> shape;  // as the model sees it
  std::string stored_as;       // "F16", "Q4_K", ... for errors
  bool floating = true;        // holds floating-point values (else refused as weights)
  std::string origin;          // the file (and stored key when it differs), for errors
};

class CheckpointTensors {
 public:
  virtual ~CheckpointTensors() = default;
  virtual const std::string& source() const = 0;  // the files, for errors
  virtual const std::map<std::string, CheckpointEntry>& entries() const = 0;
  // The tensor under `key` on the CPU: a view of a file's mapping where its bytes allow (valid
  // while this object lives; never written through), else a new tensor (decoded or converted).
  virtual at::Tensor read(const std::string& key) const = 0;
  // Drops the mapped file pages `key` was read from (loading holds one tensor's pages at a time).
  virtual void release(const std::string& key) const = 0;
};

// Safetensors files as stored (a diffusers component, possibly sharded).
std::unique_ptr<CheckpointTensors> safetensors_tensors(
    std::vector<std::shared_ptr<const SafetensorsFile>> files);
// The same over files the caller keeps alive for as long as the result is used.
std::unique_ptr<CheckpointTensors> safetensors_tensors_view(const std::vector<const SafetensorsFile*>& files);
// A GGUF file; every tensor is decoded to float32 when read.
std::unique_ptr<CheckpointTensors> gguf_tensors(std::shared_ptr<const GgufFile> file);

}  // namespace flashps
