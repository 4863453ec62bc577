// Safetensors reading (memory-mapped, fully validated before any data is touched) and writing.
// Format: 8-byte little-endian header length N, N bytes of JSON header, then the tensor bytes;
// data_offsets are relative to the byte buffer after the header. This file has no LibTorch
// dependency so it can be fuzzed and reused by the store; tensor_io.h bridges to at::Tensor.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/files/mapped_file.h"

namespace flashps {

// F8_E4M3 (float8_e4m3fn) and F8_E5M2: one byte per value, as "fp8" checkpoints store weights.
enum class DType { F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL, F8_E4M3, F8_E5M2 };

// "F32" -> DType::F32 etc.; throws Error on an unknown name.
DType dtype_from_safetensors_name(std::string_view name);
const char* dtype_safetensors_name(DType dtype);
size_t dtype_size(DType dtype);

struct TensorInfo {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  size_t begin = 0;  // byte offset into the data buffer (after the header)
  size_t end = 0;
  size_t byte_size() const { return end - begin; }
  int64_t element_count() const;
};

class SafetensorsFile {
 public:
  // Maps the file read-only and validates it: header length within the file, valid JSON object,
  // known dtypes, non-negative shapes whose byte size matches the offsets, offsets within the data
  // buffer, no two tensors overlapping. Throws CorruptDataError("<path>: <problem>") otherwise
  // (NotFoundError / IoError when the file is missing / unreadable).
  static std::shared_ptr<const SafetensorsFile> open(const std::string& path);

  // Parses an in-memory buffer with the same validation (used by the fuzz target and tests).
  // The buffer is copied; `source_name` is used in error messages.
  static std::shared_ptr<const SafetensorsFile> parse(const uint8_t* bytes, size_t size,
                                                      const std::string& source_name);

  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& source_name() const { return source_name_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }  // in header order
  const TensorInfo* find(std::string_view name) const;                  // nullptr if absent
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // Pointer to a tensor's bytes (valid while this object lives).
  const uint8_t* data(const TensorInfo& tensor) const { return data_begin_ + tensor.begin; }
  // Drops the mapped pages of a tensor that was read (a later read maps them again from the
  // file): loading a model tensor by tensor then holds one tensor's file pages at a time, not the
  // whole checkpoint. No effect on a parsed in-memory buffer.
  void release_pages(const TensorInfo& tensor) const;

 private:
  SafetensorsFile() = default;
  void parse_header(size_t total_size);

  std::string source_name_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t> index_;
  std::map<std::string, std::string> metadata_;
  const uint8_t* file_begin_ = nullptr;
  const uint8_t* data_begin_ = nullptr;
  MappedFile mapping_;          // the file (open) ...
  std::vector<uint8_t> owned_;  // ... or an owned copy (parse)
};

// Collects tensors and writes a standard safetensors file atomically (temp file + fsync + rename),
// so a crash never leaves a torn file under the final name.
class SafetensorsWriter {
 public:
  void add(const std::string& name, DType dtype, std::vector<int64_t> shape, const void* bytes,
           size_t byte_size);
  void set_metadata(const std::string& key, const std::string& value);
  void write(const std::string& path) const;

 private:
  struct Entry {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    std::vector<uint8_t> bytes;
  };
  std::vector<Entry> entries_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace flashps
