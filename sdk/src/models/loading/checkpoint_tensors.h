// The tensors a model loads, named by the model's own keys, whatever file holds them: diffusers
// safetensors (the keys as stored), GGUF files (decoded from their quantized blocks), or another
// key layout seen through a table (key_layout.h). The strict loader (weights.h) and the config
// checks (config_checks.h) read weights only through this interface.
// Quantized and float8 matrices can also be handed out as stored (read_quantized), so a model
// keeps them memory-mapped and decodes them block by block when it multiplies.
// ComfyUI's "scaled fp8" files (a `scaled_fp8` marker tensor, `<module>.scale_weight` beside an
// fp8 `<module>.weight`) are read with the scale applied; the marker, scales and `scale_input`
// tensors (inputs of fp8 matrix kernels, not needed when the weights are decoded) are not entries.
#pragma once
#include <ATen/Tensor.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace flashps {

class SafetensorsFile;
class GgufFile;
class QuantizedMatrix;

struct CheckpointEntry {
  std::vector<int64_t> shape;  // as the model sees it
  std::string stored_as;       // "F16", "Q4_K", ... for errors
  bool floating = true;        // holds floating-point values (else refused as weights)
  std::string origin;          // the file (and stored key when it differs), for errors
  bool quantized = false;      // read_quantized() hands out its stored blocks (GGUF Q*, float8 matrices)
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
  // The matrix under `key` as stored, its bytes kept alive by the result (the file stays mapped),
  // when its entry is `quantized`; nullptr otherwise. read() decodes the same values.
  virtual std::shared_ptr<const QuantizedMatrix> read_quantized(const std::string& key) const;
};

// Safetensors files as stored (a diffusers component, possibly sharded).
std::unique_ptr<CheckpointTensors> safetensors_tensors(
    std::vector<std::shared_ptr<const SafetensorsFile>> files);
// The same over files the caller keeps alive for as long as the result is used (nothing is
// handed out quantized: the result cannot keep the files alive).
std::unique_ptr<CheckpointTensors> safetensors_tensors_view(const std::vector<const SafetensorsFile*>& files);
// A GGUF file; every tensor is decoded to float32 when read; quantized matrices (2-D, Q*) can
// also be handed out as stored.
std::unique_ptr<CheckpointTensors> gguf_tensors(std::shared_ptr<const GgufFile> file);

}  // namespace flashps
