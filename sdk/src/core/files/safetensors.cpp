#include "core/files/safetensors.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/diagnostics/error.h"
#include "core/files/atomic_file.h"

// Tensor bytes are handed out as stored (little-endian); a big-endian host would need swapping.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian");

namespace flashps {
namespace {

constexpr size_t kHeaderLengthBytes = 8;
// Same cap as the reference implementation: a header this large is an attack, not a model.
constexpr uint64_t kMaxHeaderBytes = 100u * 1000u * 1000u;
// A valid header nests three levels deep (root, tensor entry, shape array); anything far deeper
// is rejected while parsing so a hostile header cannot exhaust memory building nested arrays.
constexpr int kMaxJsonDepth = 8;
constexpr const char* kMetadataKey = "__metadata__";

struct DTypeName {
  DType dtype;
  const char* name;
  size_t size;
};
constexpr DTypeName kDTypes[] = {
    {DType::F64, "F64", 8},   {DType::F32, "F32", 4}, {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2}, {DType::I64, "I64", 8}, {DType::I32, "I32", 4},
    {DType::I16, "I16", 2},   {DType::I8, "I8", 1},   {DType::U8, "U8", 1},
    {DType::BOOL, "BOOL", 1},  {DType::F8_E4M3, "F8_E4M3", 1}, {DType::F8_E5M2, "F8_E5M2", 1},
};

const DTypeName* find_dtype(std::string_view name) {
  for (const auto& entry : kDTypes) {
    if (name == entry.name) return &entry;
  }
  return nullptr;
}

const DTypeName& dtype_entry(DType dtype) {
  for (const auto& entry : kDTypes) {
    if (entry.dtype == dtype) return entry;
  }
  throw Error("invalid DType value " + std::to_string(static_cast<int>(dtype)));
}

std::string format_shape(const std::vector<int64_t>& shape) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << ']';
  return out.str();
}

std::string format_range(size_t begin, size_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

// Byte size of a tensor, or false if the element count times the dtype size overflows.
// Any zero dimension makes the tensor empty even when the other dimensions are huge.
bool checked_byte_size(const std::vector<int64_t>& shape, size_t element_size, size_t* bytes) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) {
    *bytes = 0;
    return true;
  }
  size_t product = element_size;
  for (int64_t dimension : shape) {
    if (__builtin_mul_overflow(product, static_cast<size_t>(dimension), &product)) return false;
  }
  *bytes = product;
  return true;
}

// Throws CorruptDataError(prefix + problem); the prefix names the file (and the tensor) once per
// scope.
struct ProblemReporter {
  std::string prefix;
  [[noreturn]] void operator()(const std::string& problem) const { throw CorruptDataError(prefix + problem); }
};

// Validates one header entry {"dtype", "shape", "data_offsets"} against a data buffer of
// `data_size` bytes; overlap with other tensors is checked by the caller.
TensorInfo parse_tensor_entry(const std::string& source, const std::string& name,
                              const nlohmann::json& entry, size_t data_size) {
  const ProblemReporter fail{source + ": tensor '" + name + "' "};
  if (!entry.is_object()) fail(std::string("entry must be an object, not ") + entry.type_name());
  TensorInfo info;
  info.name = name;

  auto dtype_field = entry.find("dtype");
  if (dtype_field == entry.end()) fail("has no dtype");
  if (!dtype_field->is_string()) fail("dtype must be a string");
  const DTypeName* dtype = find_dtype(dtype_field->get_ref<const std::string&>());
  if (!dtype) fail("has unknown dtype '" + dtype_field->get<std::string>() + "'");
  info.dtype = dtype->dtype;

  auto shape_field = entry.find("shape");
  if (shape_field == entry.end()) fail("has no shape");
  if (!shape_field->is_array()) fail("shape must be an array of integers");
  for (const nlohmann::json& dimension : *shape_field) {
    if (!dimension.is_number_integer()) fail("shape must be an array of integers");
    if (!dimension.is_number_unsigned()) {
      fail("has negative dimension " + std::to_string(dimension.get<int64_t>()) + " in its shape");
    }
    const uint64_t value = dimension.get<uint64_t>();
    if (value > static_cast<uint64_t>(INT64_MAX)) {
      fail("has dimension " + std::to_string(value) + " too large for int64");
    }
    info.shape.push_back(static_cast<int64_t>(value));
  }
  size_t expected_bytes = 0;
  if (!checked_byte_size(info.shape, dtype->size, &expected_bytes)) {
    fail("shape " + format_shape(info.shape) + " of " + dtype->name +
         " overflows the addressable size");
  }

  auto offsets_field = entry.find("data_offsets");
  if (offsets_field == entry.end()) fail("has no data_offsets");
  if (!offsets_field->is_array() || offsets_field->size() != 2 ||
      !(*offsets_field)[0].is_number_unsigned() || !(*offsets_field)[1].is_number_unsigned()) {
    fail("data_offsets must be two non-negative integers [begin, end]");
  }
  const uint64_t begin = (*offsets_field)[0].get<uint64_t>();
  const uint64_t end = (*offsets_field)[1].get<uint64_t>();
  const std::string range = format_range(begin, end);
  if (begin > end) fail("data_offsets " + range + " have begin after end");
  if (end > data_size) {
    fail("data_offsets " + range + " extend beyond the data buffer (" + std::to_string(data_size) +
         " bytes)");
  }
  info.begin = static_cast<size_t>(begin);
  info.end = static_cast<size_t>(end);
  if (info.byte_size() != expected_bytes) {
    fail("data_offsets " + range + " do not match shape " + format_shape(info.shape) + " of " +
         dtype->name + " (" + std::to_string(expected_bytes) + " bytes)");
  }
  return info;
}

}  // namespace

DType dtype_from_safetensors_name(std::string_view name) {
  if (const DTypeName* entry = find_dtype(name)) return entry->dtype;
  throw Error("unknown safetensors dtype '" + std::string(name) + "'");
}

const char* dtype_safetensors_name(DType dtype) { return dtype_entry(dtype).name; }

size_t dtype_size(DType dtype) { return dtype_entry(dtype).size; }

int64_t TensorInfo::element_count() const {
  // A zero dimension short-circuits: [huge, huge, 0] is valid and must not overflow here.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  int64_t count = 1;
  for (int64_t dimension : shape) count *= dimension;  // validated not to overflow when parsed
  return count;
}

// ---- SafetensorsFile --------------------------------------------------------------------------

std::shared_ptr<const SafetensorsFile> SafetensorsFile::open(const std::string& path) {
  std::shared_ptr<SafetensorsFile> file(new SafetensorsFile());
  file->source_name_ = path;
  file->mapping_ = MappedFile::open(path);
  file->file_begin_ = file->mapping_.data();
  file->parse_header(file->mapping_.size());
  return file;
}

std::shared_ptr<const SafetensorsFile> SafetensorsFile::parse(const uint8_t* bytes, size_t size,
                                                              const std::string& source_name) {
  std::shared_ptr<SafetensorsFile> file(new SafetensorsFile());
  file->source_name_ = source_name;
  if (size > 0) file->owned_.assign(bytes, bytes + size);
  file->file_begin_ = file->owned_.data();
  file->parse_header(size);
  return file;
}

void SafetensorsFile::release_pages(const TensorInfo& tensor) const {
  mapping_.release_pages(data(tensor), tensor.byte_size());
}

const TensorInfo* SafetensorsFile::find(std::string_view name) const {
  auto found = index_.find(std::string(name));
  return found == index_.end() ? nullptr : &tensors_[found->second];
}

void SafetensorsFile::parse_header(size_t total_size) {
  const ProblemReporter fail{source_name_ + ": "};

  if (total_size == 0) fail("file is empty");
  if (total_size < kHeaderLengthBytes) {
    fail("file is only " + std::to_string(total_size) +
         " bytes, shorter than the 8-byte header length");
  }
  uint64_t header_length = 0;
  for (size_t i = 0; i < kHeaderLengthBytes; ++i) {
    header_length |= static_cast<uint64_t>(file_begin_[i]) << (8 * i);
  }
  if (header_length > kMaxHeaderBytes) {
    fail("header length " + std::to_string(header_length) + " exceeds the limit of " +
         std::to_string(kMaxHeaderBytes) + " bytes");
  }
  if (header_length > total_size - kHeaderLengthBytes) {
    fail("header length " + std::to_string(header_length) +
         " extends beyond the end of the file (" + std::to_string(total_size) + " bytes)");
  }
  const char* header_begin = reinterpret_cast<const char*>(file_begin_ + kHeaderLengthBytes);
  data_begin_ = file_begin_ + kHeaderLengthBytes + header_length;
  const size_t data_size = total_size - kHeaderLengthBytes - header_length;

  // The DOM loses the key order (std::map), so the callback records the top-level keys as they
  // appear. It also rejects duplicate keys, which the DOM would silently overwrite, and nesting.
  std::vector<std::string> key_order;
  std::set<std::string> seen_keys;
  std::string callback_problem;
  struct CallbackStop {};
  auto callback = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if ((event == Event::object_start || event == Event::array_start) && depth >= kMaxJsonDepth) {
      callback_problem =
          "header JSON nests deeper than " + std::to_string(kMaxJsonDepth) + " levels";
      throw CallbackStop{};
    }
    if (event == Event::key && depth == 1) {
      std::string key = parsed.get<std::string>();
      if (!seen_keys.insert(key).second) {
        callback_problem = "header has duplicate entry '" + key + "'";
        throw CallbackStop{};
      }
      key_order.push_back(std::move(key));
    }
    return true;
  };
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(header_begin, header_begin + header_length, callback);
  } catch (const CallbackStop&) {
    fail(callback_problem);
  } catch (const nlohmann::json::exception& error) {
    fail(std::string("header is not valid JSON: ") + error.what());
  }
  if (!header.is_object()) {
    fail(std::string("header JSON must be an object, not ") + header.type_name());
  }

  for (const std::string& name : key_order) {
    const nlohmann::json& entry = header.at(name);
    if (name == kMetadataKey) {
      if (!entry.is_object()) {
        fail(std::string("__metadata__ must be an object, not ") + entry.type_name());
      }
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) {
          fail("__metadata__ value of '" + key + "' must be a string, not " + value.type_name());
        }
        metadata_[key] = value.get<std::string>();
      }
      continue;
    }

    TensorInfo info = parse_tensor_entry(source_name_, name, entry, data_size);
    index_.emplace(name, tensors_.size());
    tensors_.push_back(std::move(info));
  }

  // Overlap check on the non-empty ranges sorted by start; empty tensors may sit anywhere.
  std::vector<const TensorInfo*> by_begin;
  for (const TensorInfo& tensor : tensors_) {
    if (tensor.byte_size() > 0) by_begin.push_back(&tensor);
  }
  std::sort(by_begin.begin(), by_begin.end(),
            [](const TensorInfo* a, const TensorInfo* b) { return a->begin < b->begin; });
  for (size_t i = 1; i < by_begin.size(); ++i) {
    const TensorInfo& previous = *by_begin[i - 1];
    const TensorInfo& current = *by_begin[i];
    if (current.begin < previous.end) {
      fail("tensors '" + previous.name + "' " + format_range(previous.begin, previous.end) +
           " and '" + current.name + "' " + format_range(current.begin, current.end) + " overlap");
    }
  }
}

// ---- SafetensorsWriter ------------------------------------------------------------------------

void SafetensorsWriter::add(const std::string& name, DType dtype, std::vector<int64_t> shape,
                            const void* bytes, size_t byte_size) {
  const std::string what = "safetensors writer: tensor '" + name + "'";
  if (name == kMetadataKey) throw Error(what + " uses the reserved name");
  for (const Entry& entry : entries_) {
    if (entry.name == name) throw Error(what + " was added twice");
  }
  for (int64_t dimension : shape) {
    if (dimension < 0) {
      throw Error(what + " has negative dimension in shape " + format_shape(shape));
    }
  }
  size_t expected_bytes = 0;
  if (!checked_byte_size(shape, dtype_size(dtype), &expected_bytes) ||
      expected_bytes != byte_size) {
    throw Error(what + " has " + std::to_string(byte_size) + " bytes, but shape " +
                format_shape(shape) + " of " + dtype_safetensors_name(dtype) + " needs " +
                std::to_string(expected_bytes));
  }
  if (byte_size > 0 && bytes == nullptr) throw Error(what + " has no data");
  Entry entry{name, dtype, std::move(shape), {}};
  if (byte_size > 0) {
    const auto* first = static_cast<const uint8_t*>(bytes);
    entry.bytes.assign(first, first + byte_size);
  }
  entries_.push_back(std::move(entry));
}

void SafetensorsWriter::set_metadata(const std::string& key, const std::string& value) {
  metadata_[key] = value;
}

void SafetensorsWriter::write(const std::string& path) const {
  // Header JSON written by hand so the entries keep their insertion order.
  std::string header;
  try {
    nlohmann::json metadata = nlohmann::json::object();
    metadata["format"] = "pt";
    for (const auto& [key, value] : metadata_) metadata[key] = value;
    header = "{\"" + std::string(kMetadataKey) + "\":" + metadata.dump();
    size_t offset = 0;
    for (const Entry& entry : entries_) {
      nlohmann::json description = {{"dtype", dtype_safetensors_name(entry.dtype)},
                                    {"shape", entry.shape},
                                    {"data_offsets", {offset, offset + entry.bytes.size()}}};
      header += "," + nlohmann::json(entry.name).dump() + ":" + description.dump();
      offset += entry.bytes.size();
    }
    header += "}";
  } catch (const nlohmann::json::exception& error) {
    // dump() rejects names or metadata that are not valid UTF-8.
    throw Error(path + ": cannot encode safetensors header: " + error.what());
  }
  // Padding keeps the data buffer 8-byte aligned for readers that map the file.
  header.append((8 - header.size() % 8) % 8, ' ');

  char length_bytes[kHeaderLengthBytes];
  for (size_t i = 0; i < kHeaderLengthBytes; ++i) {
    length_bytes[i] = static_cast<char>(static_cast<uint64_t>(header.size()) >> (8 * i));
  }
  std::vector<std::string_view> pieces{{length_bytes, sizeof length_bytes}, header};
  for (const Entry& entry : entries_) {
    pieces.emplace_back(reinterpret_cast<const char*>(entry.bytes.data()), entry.bytes.size());
  }
  write_file_atomically(path, pieces);
}

}  // namespace flashps
