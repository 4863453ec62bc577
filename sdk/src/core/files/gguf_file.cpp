#include "core/files/gguf_file.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "core/diagnostics/error.h"
#include "core/files/atomic_file.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "GGUF data is read little-endian");

namespace flashps {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian uint32
constexpr uint32_t kMaxDimensions = 4;   // GGML_MAX_DIMS
// Far above any real key or tensor name; a longer one is an attack, not a model.
constexpr uint64_t kMaxNameBytes = 65535;
constexpr int kMaxArrayNesting = 4;
constexpr size_t kMaxAlignment = 1u << 20;

// Throws CorruptDataError(prefix + problem).
struct GgufProblem {
  std::string prefix;
  [[noreturn]] void operator()(const std::string& problem) const {
    throw CorruptDataError(prefix + problem);
  }
};

// Reads the header's little-endian fields, refusing to step past the end of the file.
class HeaderReader {
 public:
  HeaderReader(const uint8_t* begin, size_t size, GgufProblem fail)
      : begin_(begin), size_(size), fail_(std::move(fail)) {}

  size_t position() const { return position_; }
  size_t remaining() const { return size_ - position_; }

  const uint8_t* take(size_t bytes, const char* what) {
    if (bytes > remaining()) {
      fail_(std::string("truncated: ") + what + " at byte " + std::to_string(position_) +
            " needs " + std::to_string(bytes) + " bytes, the file has " +
            std::to_string(remaining()) + " left");
    }
    const uint8_t* at = begin_ + position_;
    position_ += bytes;
    return at;
  }
  template <typename T>
  T read(const char* what) {
    T value;
    std::memcpy(&value, take(sizeof value, what), sizeof value);
    return value;
  }
  std::string string(const char* what, uint64_t max_length = kMaxNameBytes) {
    const uint64_t length = read<uint64_t>(what);
    if (length > max_length) {
      fail_(std::string(what) + " at byte " + std::to_string(position_ - 8) + " is " +
            std::to_string(length) + " bytes long (limit " + std::to_string(kMaxNameBytes) + ")");
    }
    const uint8_t* bytes = take(length, what);
    return std::string(reinterpret_cast<const char*>(bytes), length);
  }

 private:
  const uint8_t* begin_;
  size_t size_;
  size_t position_ = 0;
  GgufProblem fail_;
};

// Bytes of one scalar value, or 0 for STRING / ARRAY / an unknown type.
size_t scalar_size(GgufValueType type) {
  switch (type) {
    case GgufValueType::UINT8: case GgufValueType::INT8: case GgufValueType::BOOL: return 1;
    case GgufValueType::UINT16: case GgufValueType::INT16: return 2;
    case GgufValueType::UINT32: case GgufValueType::INT32: case GgufValueType::FLOAT32: return 4;
    case GgufValueType::UINT64: case GgufValueType::INT64: case GgufValueType::FLOAT64: return 8;
    default: return 0;
  }
}

bool known_value_type(uint32_t type) { return type <= static_cast<uint32_t>(GgufValueType::FLOAT64); }

// Reads a value of `type`; arrays are walked (their elements bounded by the file) and skipped.
GgufValue read_value(HeaderReader& reader, GgufValueType type, const GgufProblem& fail,
                     int nesting) {
  GgufValue value;
  value.type = type;
  switch (type) {
    case GgufValueType::UINT8: value.unsigned_value = reader.read<uint8_t>("value"); break;
    case GgufValueType::UINT16: value.unsigned_value = reader.read<uint16_t>("value"); break;
    case GgufValueType::UINT32: value.unsigned_value = reader.read<uint32_t>("value"); break;
    case GgufValueType::UINT64: value.unsigned_value = reader.read<uint64_t>("value"); break;
    case GgufValueType::INT8: value.signed_value = reader.read<int8_t>("value"); break;
    case GgufValueType::INT16: value.signed_value = reader.read<int16_t>("value"); break;
    case GgufValueType::INT32: value.signed_value = reader.read<int32_t>("value"); break;
    case GgufValueType::INT64: value.signed_value = reader.read<int64_t>("value"); break;
    case GgufValueType::FLOAT32: value.float_value = reader.read<float>("value"); break;
    case GgufValueType::FLOAT64: value.float_value = reader.read<double>("value"); break;
    case GgufValueType::BOOL: {
      const uint8_t byte = reader.read<uint8_t>("value");
      if (byte > 1) fail("boolean value " + std::to_string(byte) + " is neither 0 nor 1");
      value.unsigned_value = byte;
      break;
    }
    case GgufValueType::STRING: value.string_value = reader.string("string value", UINT64_MAX); break;
    case GgufValueType::ARRAY: {
      if (nesting >= kMaxArrayNesting) {
        fail("arrays nest deeper than " + std::to_string(kMaxArrayNesting) + " levels");
      }
      const uint32_t element_type = reader.read<uint32_t>("array element type");
      if (!known_value_type(element_type)) {
        fail("array has unknown element type " + std::to_string(element_type));
      }
      value.element_type = static_cast<GgufValueType>(element_type);
      value.element_count = reader.read<uint64_t>("array length");
      if (const size_t size = scalar_size(value.element_type)) {
        if (value.element_count > reader.remaining() / size) {
          fail("array of " + std::to_string(value.element_count) + " elements extends beyond the file");
        }
        reader.take(value.element_count * size, "array");
      } else {
        // Strings and arrays take at least 8 bytes each: the count is bounded by the file.
        if (value.element_count > reader.remaining() / 8) {
          fail("array of " + std::to_string(value.element_count) + " elements extends beyond the file");
        }
        for (uint64_t i = 0; i < value.element_count; ++i)
          read_value(reader, value.element_type, fail, nesting + 1);
      }
      break;
    }
  }
  return value;
}

std::string format_ne(const std::vector<int64_t>& ne) {
  std::string text = "[";
  for (size_t i = 0; i < ne.size(); ++i) text += (i ? ", " : "") + std::to_string(ne[i]);
  return text + "]";
}

std::string supported_types() {
  std::string names;
  for (uint32_t type = 0; type < 64; ++type) {
    if (const GgmlTypeTraits* traits = ggml_type_traits(type))
      names += (names.empty() ? "" : ", ") + std::string(traits->name);
  }
  return names;
}

}  // namespace

std::shared_ptr<const GgufFile> GgufFile::open(const std::string& path) {
  std::shared_ptr<GgufFile> file(new GgufFile());
  file->source_name_ = path;
  file->mapping_ = MappedFile::open(path);
  file->file_begin_ = file->mapping_.data();
  file->parse_file(file->mapping_.size());
  return file;
}

std::shared_ptr<const GgufFile> GgufFile::parse(const uint8_t* bytes, size_t size,
                                                const std::string& source_name) {
  std::shared_ptr<GgufFile> file(new GgufFile());
  file->source_name_ = source_name;
  if (size > 0) file->owned_.assign(bytes, bytes + size);
  file->file_begin_ = file->owned_.data();
  file->parse_file(size);
  return file;
}

void GgufFile::parse_file(size_t size) {
  const GgufProblem fail{source_name_ + ": "};
  HeaderReader reader(file_begin_, size, fail);
  if (size < 4 || reader.read<uint32_t>("magic") != kMagic) {
    fail("not a GGUF file (it does not start with \"GGUF\")");
  }
  version_ = reader.read<uint32_t>("version");
  if (version_ == 1) {
    throw UnsupportedError(source_name_ + ": GGUF version 1 (2023's first format) is not "
                           "supported; convert the model again with a current gguf-py");
  }
  if (version_ != 2 && version_ != 3) {
    const bool swapped = (version_ >> 24) == 2 || (version_ >> 24) == 3;
    throw UnsupportedError(source_name_ + (swapped ? ": a big-endian GGUF file; FlashPS reads "
                                                     "little-endian GGUF only"
                                                   : ": GGUF version " + std::to_string(version_) +
                                                         " is not supported (2 and 3 are)"));
  }
  const uint64_t tensor_count = reader.read<uint64_t>("tensor count");
  const uint64_t metadata_count = reader.read<uint64_t>("metadata count");
  // Each metadata entry takes at least 12 bytes, each tensor entry 24: counts beyond what the
  // file can hold are refused before anything is allocated for them.
  if (metadata_count > reader.remaining() / 12) {
    fail("metadata count " + std::to_string(metadata_count) + " is more than the file can hold");
  }
  for (uint64_t i = 0; i < metadata_count; ++i) {
    std::string key = reader.string("metadata key");
    const GgufProblem fail_key{source_name_ + ": metadata '" + key + "': "};
    const uint32_t type = reader.read<uint32_t>("metadata value type");
    if (!known_value_type(type)) fail_key("unknown value type " + std::to_string(type));
    GgufValue value = read_value(reader, static_cast<GgufValueType>(type), fail_key, 0);
    if (metadata_.count(key)) fail_key("appears twice");
    metadata_.emplace(std::move(key), std::move(value));
  }
  if (auto found = metadata_.find("general.alignment"); found != metadata_.end()) {
    const GgufValue& value = found->second;
    if (value.type != GgufValueType::UINT32 || value.unsigned_value == 0 ||
        value.unsigned_value > kMaxAlignment || (value.unsigned_value & (value.unsigned_value - 1))) {
      fail("general.alignment must be a power of two up to " + std::to_string(kMaxAlignment) +
           " stored as UINT32");
    }
    alignment_ = static_cast<size_t>(value.unsigned_value);
  }

  if (tensor_count > reader.remaining() / 24) {
    fail("tensor count " + std::to_string(tensor_count) + " is more than the file can hold");
  }
  for (uint64_t i = 0; i < tensor_count; ++i) {
    GgufTensor tensor;
    tensor.name = reader.string("tensor name");
    const GgufProblem fail_tensor{source_name_ + ": tensor '" + tensor.name + "': "};
    if (index_.count(tensor.name)) fail_tensor("appears twice");
    const uint32_t dimensions = reader.read<uint32_t>("tensor dimension count");
    if (dimensions == 0 || dimensions > kMaxDimensions) {
      fail_tensor("has " + std::to_string(dimensions) + " dimensions (1 to 4 are valid)");
    }
    tensor.element_count = 1;
    for (uint32_t d = 0; d < dimensions; ++d) {
      const uint64_t extent = reader.read<uint64_t>("tensor dimension");
      if (extent == 0 || extent > uint64_t(INT64_MAX) ||
          __builtin_mul_overflow(tensor.element_count, int64_t(extent), &tensor.element_count)) {
        fail_tensor("dimension " + std::to_string(extent) + " is zero or too large");
      }
      tensor.ne.push_back(int64_t(extent));
    }
    tensor.shape.assign(tensor.ne.rbegin(), tensor.ne.rend());
    const uint32_t type = reader.read<uint32_t>("tensor type");
    const GgmlTypeTraits* traits = ggml_type_traits(type);
    if (!traits) {
      throw UnsupportedError(source_name_ + ": tensor '" + tensor.name + "' has type " +
                             std::to_string(type) + " (" + ggml_type_name(type) +
                             "), which FlashPS does not decode (it decodes " + supported_types() + ")");
    }
    tensor.type = traits->type;
    if (tensor.ne[0] % traits->block_size != 0) {
      fail_tensor("rows of " + std::to_string(tensor.ne[0]) + " values are not whole " +
                  traits->name + " blocks of " + std::to_string(traits->block_size));
    }
    const uint64_t blocks = uint64_t(tensor.element_count / traits->block_size);
    if (__builtin_mul_overflow(blocks, uint64_t(traits->type_size), &tensor.byte_size)) {
      fail_tensor("shape " + format_ne(tensor.ne) + " overflows the addressable size");
    }
    tensor.offset = reader.read<uint64_t>("tensor offset");  // relative until the data is found
    index_.emplace(tensor.name, tensors_.size());
    tensors_.push_back(std::move(tensor));
  }

  const size_t data_start = (reader.position() + alignment_ - 1) / alignment_ * alignment_;
  if (data_start > size && !tensors_.empty()) fail("the file ends before its tensor data");
  const size_t data_size = data_start > size ? 0 : size - data_start;
  for (GgufTensor& tensor : tensors_) {
    const GgufProblem fail_tensor{source_name_ + ": tensor '" + tensor.name + "': "};
    if (tensor.offset % alignment_ != 0) {
      fail_tensor("offset " + std::to_string(tensor.offset) + " is not aligned to " +
                  std::to_string(alignment_) + " bytes");
    }
    if (tensor.offset > data_size || tensor.byte_size > data_size - tensor.offset) {
      fail_tensor(std::to_string(tensor.byte_size) + " bytes at data offset " +
                  std::to_string(tensor.offset) + " extend beyond the end of the file (" +
                  std::to_string(data_size) + " bytes of data; truncated?)");
    }
    tensor.offset += data_start;
  }
  std::vector<const GgufTensor*> by_offset;
  for (const GgufTensor& tensor : tensors_) by_offset.push_back(&tensor);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const GgufTensor* a, const GgufTensor* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    if (by_offset[i]->offset < by_offset[i - 1]->offset + by_offset[i - 1]->byte_size) {
      fail("tensors '" + by_offset[i - 1]->name + "' and '" + by_offset[i]->name + "' overlap");
    }
  }
}

const GgufTensor* GgufFile::find(std::string_view name) const {
  auto found = index_.find(name);
  return found == index_.end() ? nullptr : &tensors_[found->second];
}

std::optional<std::string> GgufFile::metadata_string(std::string_view key) const {
  auto found = metadata_.find(key);
  if (found == metadata_.end() || found->second.type != GgufValueType::STRING) return std::nullopt;
  return found->second.string_value;
}

std::optional<int64_t> GgufFile::metadata_integer(std::string_view key) const {
  auto found = metadata_.find(key);
  if (found == metadata_.end()) return std::nullopt;
  const GgufValue& value = found->second;
  switch (value.type) {
    case GgufValueType::UINT8: case GgufValueType::UINT16: case GgufValueType::UINT32:
    case GgufValueType::UINT64:
      if (value.unsigned_value > uint64_t(INT64_MAX)) return std::nullopt;
      return int64_t(value.unsigned_value);
    case GgufValueType::INT8: case GgufValueType::INT16: case GgufValueType::INT32:
    case GgufValueType::INT64:
      return value.signed_value;
    default: return std::nullopt;
  }
}

void GgufFile::dequantize(const GgufTensor& tensor, float* out) const {
  ggml_dequantize(tensor.type, data(tensor), tensor.element_count, out);
  const GgmlTypeTraits* traits = ggml_type_traits(uint32_t(tensor.type));
  for (int64_t i = 0; i < tensor.element_count; ++i) {
    if (!std::isfinite(out[i])) {
      throw CorruptDataError(source_name_ + ": tensor '" + tensor.name + "' (" + traits->name +
                             ") decodes to " + (std::isnan(out[i]) ? "NaN" : "infinity") +
                             " at value " + std::to_string(i) + " (block " +
                             std::to_string(i / traits->block_size) + "): a corrupt scale or weight");
    }
  }
}

void GgufFile::release_pages(const GgufTensor& tensor) const {
  mapping_.release_pages(data(tensor), tensor.byte_size);
}

// ---- GgufWriter ---------------------------------------------------------------------------------

void GgufWriter::set_string(const std::string& key, const std::string& value) {
  GgufValue entry;
  entry.type = GgufValueType::STRING;
  entry.string_value = value;
  metadata_.emplace_back(key, entry);
}

void GgufWriter::set_uint32(const std::string& key, uint32_t value) {
  GgufValue entry;
  entry.type = GgufValueType::UINT32;
  entry.unsigned_value = value;
  metadata_.emplace_back(key, entry);
  if (key == "general.alignment") alignment_ = value;
}

void GgufWriter::set_float32(const std::string& key, float value) {
  GgufValue entry;
  entry.type = GgufValueType::FLOAT32;
  entry.float_value = value;
  metadata_.emplace_back(key, entry);
}

void GgufWriter::add_tensor(const std::string& name, GgmlType type, std::vector<int64_t> ne,
                            const void* bytes, size_t byte_size) {
  for (const Entry& tensor : tensors_) {
    if (tensor.name == name) throw InvalidArgumentError("GGUF writer: tensor '" + name + "' added twice");
  }
  const GgmlTypeTraits* traits = ggml_type_traits(uint32_t(type));
  int64_t count = 1;
  for (int64_t extent : ne) count *= extent;
  if (!traits || ne.empty() || ne[0] % traits->block_size != 0 ||
      size_t(count / traits->block_size * traits->type_size) != byte_size) {
    throw InvalidArgumentError("GGUF writer: tensor '" + name + "' of shape " + format_ne(ne) +
                               " does not match its " + std::to_string(byte_size) + " bytes");
  }
  const auto* first = static_cast<const uint8_t*>(bytes);
  tensors_.push_back({name, type, std::move(ne), std::vector<uint8_t>(first, first + byte_size)});
}

std::vector<uint8_t> GgufWriter::encode() const {
  std::vector<uint8_t> out;
  auto put = [&out](const void* bytes, size_t size) {
    const auto* first = static_cast<const uint8_t*>(bytes);
    out.insert(out.end(), first, first + size);
  };
  auto put_u32 = [&put](uint32_t value) { put(&value, 4); };
  auto put_u64 = [&put](uint64_t value) { put(&value, 8); };
  auto put_string = [&](const std::string& text) {
    put_u64(text.size());
    put(text.data(), text.size());
  };
  auto pad = [&out, this] { out.resize((out.size() + alignment_ - 1) / alignment_ * alignment_, 0); };

  put_u32(kMagic);
  put_u32(3);
  put_u64(tensors_.size());
  put_u64(metadata_.size());
  for (const auto& [key, value] : metadata_) {
    put_string(key);
    put_u32(uint32_t(value.type));
    if (value.type == GgufValueType::STRING) put_string(value.string_value);
    if (value.type == GgufValueType::UINT32) put_u32(uint32_t(value.unsigned_value));
    if (value.type == GgufValueType::FLOAT32) {
      const float number = float(value.float_value);
      put(&number, 4);
    }
  }
  uint64_t offset = 0;
  for (const Entry& tensor : tensors_) {
    put_string(tensor.name);
    put_u32(uint32_t(tensor.ne.size()));
    for (int64_t extent : tensor.ne) put_u64(uint64_t(extent));
    put_u32(uint32_t(tensor.type));
    put_u64(offset);
    offset += (tensor.bytes.size() + alignment_ - 1) / alignment_ * alignment_;
  }
  pad();
  for (const Entry& tensor : tensors_) {
    put(tensor.bytes.data(), tensor.bytes.size());
    pad();
  }
  return out;
}

void GgufWriter::write(const std::string& path) const {
  const std::vector<uint8_t> bytes = encode();
  write_file_atomically(path, {{reinterpret_cast<const char*>(bytes.data()), bytes.size()}});
}

}  // namespace flashps
