// Writing a safetensors or GGUF file one tensor at a time: every tensor's name, shape and
// encoding is declared first (both formats put the header before the data, and the header holds
// every offset), then the values are given in that order, encoded and written, and dropped. So a
// file far larger than memory is written with one tensor in memory. The bytes go to
// "<path>.partial" and are renamed to `path` only when complete: an interrupted write never leaves
// a torn file under the final name (and the partial file is removed when the writer is destroyed
// unfinished).
#pragma once
#include <ATen/Tensor.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/quant/ggml_blocks.h"

namespace flashps {

// How one tensor is stored: a safetensors dtype or a ggml type.
enum class TensorEncoding { F32, F16, BF16, F8_E4M3, F8_E5M2, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K };

const char* tensor_encoding_name(TensorEncoding encoding);  // "F8_E4M3", "Q4_K", ...
bool is_ggml_block_encoding(TensorEncoding encoding);       // Q*: GGUF only
GgmlType ggml_type_of(TensorEncoding encoding);             // throws for float8 (GGUF has none)
// Bytes `count` values take (count whole blocks of a ggml block type).
size_t encoded_byte_size(TensorEncoding encoding, int64_t count);
// `values` (a float32 CPU tensor; rows a multiple of the block size for Q*) encoded, in parallel.
std::vector<uint8_t> encode_tensor(const at::Tensor& values, TensorEncoding encoding);

class StreamedTensorFile {
 public:
  enum class Format { safetensors, gguf };
  StreamedTensorFile(std::string path, Format format);
  ~StreamedTensorFile();  // removes the partial file when finish() was not reached
  StreamedTensorFile(const StreamedTensorFile&) = delete;
  StreamedTensorFile& operator=(const StreamedTensorFile&) = delete;

  // Before the first write: metadata (safetensors "__metadata__" strings; GGUF KV pairs) and the
  // tensors, in the order their values will come.
  void set_string(const std::string& key, const std::string& value);
  void set_uint32(const std::string& key, uint32_t value);  // GGUF only (safetensors: as text)
  void declare(const std::string& name, std::vector<int64_t> shape, TensorEncoding encoding);

  // Creates the partial file and writes the header (else the first write_next does).
  void begin();
  // The next declared tensor's values (float32, its declared shape); the first call writes the header.
  void write_next(const std::string& name, const at::Tensor& values);
  // After the last tensor: flush to disk, rename into place.
  void finish();

  const std::string& path() const { return path_; }
  size_t tensor_count() const { return tensors_.size(); }
  size_t written_count() const { return next_; }
  uint64_t planned_bytes() const;  // header + data, once declared

 private:
  struct Declared {
    std::string name;
    std::vector<int64_t> shape;
    TensorEncoding encoding;
    uint64_t offset = 0;  // in the data section
    uint64_t bytes = 0;
  };
  void write_header();
  void put(const void* bytes, size_t size);
  std::string header_bytes() const;

  std::string path_, partial_path_;
  Format format_;
  std::vector<std::pair<std::string, std::string>> strings_;
  std::vector<std::pair<std::string, uint32_t>> numbers_;
  std::vector<Declared> tensors_;
  uint64_t data_bytes_ = 0;
  size_t next_ = 0;
  std::FILE* file_ = nullptr;
  bool finished_ = false;
};

}  // namespace flashps
