// Bridge between safetensors files and LibTorch tensors.
#pragma once
#include <ATen/Tensor.h>

#include <map>
#include <string>
#include <vector>

#include "core/files/safetensors.h"

namespace flashps {

at::ScalarType to_scalar_type(DType dtype);  // throws Error for dtypes LibTorch lacks
DType to_dtype(at::ScalarType type);

// Copies one tensor out of the file into a new CPU tensor of its stored dtype (float8, which
// LibTorch 1.13 lacks, decoded to float32).
at::Tensor read_tensor(const SafetensorsFile& file, const TensorInfo& info);
// The tensor's bytes in the file's mapping, without a copy, when they are aligned for their dtype
// (else a copy, as read_tensor). A view must not outlive `file` and must not be written:
// convert or clone it (loaders convert to their dtype straight from the mapping).
at::Tensor mapped_tensor(const SafetensorsFile& file, const TensorInfo& info);
// Reads every tensor of a file (name -> tensor).
std::map<std::string, at::Tensor> load_safetensors(const std::string& path);
// Writes CPU or CUDA tensors (copied to contiguous CPU) atomically.
void save_safetensors(const std::string& path,
                      const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

}  // namespace flashps
