// GGUF files (llama.cpp's format, as stable-diffusion.cpp and ComfyUI-GGUF store quantized
// diffusion models), read in place from a memory mapping and fully validated before any tensor
// is touched. Layout (little-endian): "GGUF", version (2 or 3), tensor count, metadata count;
// metadata as key, typed value; per tensor its name, dimensions (ggml order: ne[0] is the row
// length), ggml type and offset; then, aligned to general.alignment (default 32), the data.
// No LibTorch here, so the parser is fuzzed (fuzz/fuzz_gguf.cpp); models/loading/ bridges to
// tensors.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/files/mapped_file.h"
#include "core/quant/ggml_blocks.h"

namespace flashps {

enum class GgufValueType : uint32_t {
  UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6, BOOL = 7,
  STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};

// One metadata value. Arrays keep only their element type and count: their elements stay in the
// file (a language model's vocabulary holds 10^5 strings; no diffusion model needs them).
struct GgufValue {
  GgufValueType type = GgufValueType::UINT8;
  uint64_t unsigned_value = 0;  // UINT*, BOOL
  int64_t signed_value = 0;     // INT*
  double float_value = 0;       // FLOAT*
  std::string string_value;     // STRING
  GgufValueType element_type = GgufValueType::UINT8;  // ARRAY
  uint64_t element_count = 0;                         // ARRAY
};

struct GgufTensor {
  std::string name;
  GgmlType type = GgmlType::F32;
  std::vector<int64_t> ne;     // ggml order, ne[0] innermost
  std::vector<int64_t> shape;  // PyTorch order (ne reversed)
  size_t offset = 0;           // of its first byte in the file
  size_t byte_size = 0;
  int64_t element_count = 0;
};

class GgufFile {
 public:
  // Maps and validates `path`: magic, version, counts and lengths within the file, known value
  // and tensor types, dimensions whose rows are whole blocks, aligned offsets, data within the
  // file, no duplicate names and no overlapping tensors. Throws CorruptDataError naming the file
  // (and the tensor or key), UnsupportedError for a valid file FlashPS cannot read (GGUF v1,
  // big-endian, an unknown quantization type), NotFoundError / IoError as MappedFile.
  static std::shared_ptr<const GgufFile> open(const std::string& path);
  // The same on an in-memory copy of `bytes` (fuzzing, tests); `source_name` names it in errors.
  static std::shared_ptr<const GgufFile> parse(const uint8_t* bytes, size_t size,
                                               const std::string& source_name);

  const std::string& source_name() const { return source_name_; }
  uint32_t version() const { return version_; }
  size_t alignment() const { return alignment_; }
  const std::vector<GgufTensor>& tensors() const { return tensors_; }  // in file order
  const GgufTensor* find(std::string_view name) const;                 // nullptr if absent
  const std::map<std::string, GgufValue, std::less<>>& metadata() const { return metadata_; }
  std::optional<std::string> metadata_string(std::string_view key) const;  // a STRING value
  std::optional<int64_t> metadata_integer(std::string_view key) const;     // any integer type

  const uint8_t* data(const GgufTensor& tensor) const { return file_begin_ + tensor.offset; }
  // Decodes a whole tensor into `out` (element_count floats). Throws CorruptDataError naming the
  // file and tensor when a value decodes to NaN or infinity (a corrupt scale, never a weight).
  void dequantize(const GgufTensor& tensor, float* out) const;
  // Drops a read tensor's mapped pages (see MappedFile::release_pages).
  void release_pages(const GgufTensor& tensor) const;

 private:
  GgufFile() = default;
  void parse_file(size_t size);

  std::string source_name_;
  uint32_t version_ = 0;
  size_t alignment_ = 32;
  std::vector<GgufTensor> tensors_;
  std::map<std::string, size_t, std::less<>> index_;
  std::map<std::string, GgufValue, std::less<>> metadata_;
  const uint8_t* file_begin_ = nullptr;
  MappedFile mapping_;          // the file (open) ...
  std::vector<uint8_t> owned_;  // ... or an owned copy (parse)
};

// Writes GGUF v3 files (random-weight models, tests): metadata, then tensors already encoded in
// their ggml type. The file is written atomically (temporary file, fsync, rename).
class GgufWriter {
 public:
  void set_string(const std::string& key, const std::string& value);
  void set_uint32(const std::string& key, uint32_t value);
  void set_float32(const std::string& key, float value);
  // `ne` in ggml order; `bytes` must be exactly the encoded size of that many values.
  void add_tensor(const std::string& name, GgmlType type, std::vector<int64_t> ne,
                  const void* bytes, size_t byte_size);
  std::vector<uint8_t> encode() const;
  void write(const std::string& path) const;

 private:
  struct Entry {
    std::string name;
    GgmlType type;
    std::vector<int64_t> ne;
    std::vector<uint8_t> bytes;
  };
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::vector<Entry> tensors_;
  uint32_t alignment_ = 32;
};

}  // namespace flashps
