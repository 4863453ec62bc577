#include "models/random/streamed_tensor_file.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"
#include "core/quant/ggml_quantize.h"
#include "core/quant/small_floats.h"

namespace flashps {
namespace {

constexpr uint64_t kStreamedGgufAlignment = 32;

uint64_t streamed_aligned(uint64_t value, uint64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

int64_t streamed_element_count(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t extent : shape) count *= extent;
  return count;
}

// Element-wise encoders of the safetensors float formats.
template <typename Encode>
void streamed_encode_each(const float* values, int64_t count, uint8_t* out, size_t width, Encode encode) {
  at::parallel_for(0, count, 1 << 16, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const auto code = encode(values[i]);
      std::memcpy(out + size_t(i) * width, &code, width);
    }
  });
}

}  // namespace

const char* tensor_encoding_name(TensorEncoding encoding) {
  switch (encoding) {
    case TensorEncoding::F32: return "F32";
    case TensorEncoding::F16: return "F16";
    case TensorEncoding::BF16: return "BF16";
    case TensorEncoding::F8_E4M3: return "F8_E4M3";
    case TensorEncoding::F8_E5M2: return "F8_E5M2";
    default: return ggml_type_name(uint32_t(ggml_type_of(encoding)));
  }
}

bool is_ggml_block_encoding(TensorEncoding encoding) {
  return encoding != TensorEncoding::F32 && encoding != TensorEncoding::F16 && encoding != TensorEncoding::BF16 &&
         encoding != TensorEncoding::F8_E4M3 && encoding != TensorEncoding::F8_E5M2;
}

GgmlType ggml_type_of(TensorEncoding encoding) {
  switch (encoding) {
    case TensorEncoding::F32: return GgmlType::F32;
    case TensorEncoding::F16: return GgmlType::F16;
    case TensorEncoding::BF16: return GgmlType::BF16;
    case TensorEncoding::Q8_0: return GgmlType::Q8_0;
    case TensorEncoding::Q4_0: return GgmlType::Q4_0;
    case TensorEncoding::Q4_1: return GgmlType::Q4_1;
    case TensorEncoding::Q5_0: return GgmlType::Q5_0;
    case TensorEncoding::Q5_1: return GgmlType::Q5_1;
    case TensorEncoding::Q4_K: return GgmlType::Q4_K;
    case TensorEncoding::Q5_K: return GgmlType::Q5_K;
    case TensorEncoding::Q6_K: return GgmlType::Q6_K;
    default: throw InvalidArgumentError("GGUF has no float8 tensor type");
  }
}

size_t encoded_byte_size(TensorEncoding encoding, int64_t count) {
  switch (encoding) {
    case TensorEncoding::F8_E4M3: case TensorEncoding::F8_E5M2: return size_t(count);
    default: return ggml_encoded_size(ggml_type_of(encoding), count);
  }
}

std::vector<uint8_t> encode_tensor(const at::Tensor& tensor, TensorEncoding encoding) {
  const at::Tensor values = tensor.to(at::kFloat).contiguous();
  const int64_t count = values.numel();
  const float* data = values.data_ptr<float>();
  std::vector<uint8_t> out(encoded_byte_size(encoding, count));
  switch (encoding) {
    case TensorEncoding::F32: std::memcpy(out.data(), data, out.size()); return out;
    case TensorEncoding::F16: streamed_encode_each(data, count, out.data(), 2, float_to_half); return out;
    case TensorEncoding::BF16: streamed_encode_each(data, count, out.data(), 2, float_to_bf16_bits); return out;
    case TensorEncoding::F8_E4M3: streamed_encode_each(data, count, out.data(), 1, float_to_float8_e4m3fn); return out;
    case TensorEncoding::F8_E5M2: streamed_encode_each(data, count, out.data(), 1, float_to_float8_e5m2); return out;
    default: break;
  }
  const GgmlType type = ggml_type_of(encoding);
  const GgmlTypeTraits* traits = ggml_type_traits(uint32_t(type));
  const int64_t blocks = count / traits->block_size;
  at::parallel_for(0, blocks, 256, [&](int64_t begin, int64_t end) {
    ggml_quantize(type, data + begin * traits->block_size, (end - begin) * traits->block_size,
                  out.data() + size_t(begin) * size_t(traits->type_size));
  });
  return out;
}

StreamedTensorFile::StreamedTensorFile(std::string path, Format format)
    : path_(std::move(path)), partial_path_(path_ + ".partial"), format_(format) {}

StreamedTensorFile::~StreamedTensorFile() {
  if (file_) std::fclose(file_);
  if (!finished_) ::unlink(partial_path_.c_str());
}

void StreamedTensorFile::set_string(const std::string& key, const std::string& value) {
  if (file_) throw InvalidArgumentError(path_ + ": metadata after the first tensor");
  strings_.emplace_back(key, value);
}

void StreamedTensorFile::set_uint32(const std::string& key, uint32_t value) {
  if (file_) throw InvalidArgumentError(path_ + ": metadata after the first tensor");
  numbers_.emplace_back(key, value);
}

void StreamedTensorFile::declare(const std::string& name, std::vector<int64_t> shape, TensorEncoding encoding) {
  if (file_) throw InvalidArgumentError(path_ + ": tensor " + name + " declared after the first write");
  if (format_ == Format::safetensors && is_ggml_block_encoding(encoding))
    throw InvalidArgumentError(path_ + ": " + name + ": safetensors cannot store " + tensor_encoding_name(encoding));
  if (format_ == Format::gguf && (encoding == TensorEncoding::F8_E4M3 || encoding == TensorEncoding::F8_E5M2))
    throw InvalidArgumentError(path_ + ": " + name + ": GGUF cannot store float8");
  Declared tensor{name, std::move(shape), encoding};
  tensor.bytes = encoded_byte_size(encoding, streamed_element_count(tensor.shape));
  tensor.offset = data_bytes_;
  data_bytes_ += format_ == Format::gguf ? streamed_aligned(tensor.bytes, kStreamedGgufAlignment) : tensor.bytes;
  tensors_.push_back(std::move(tensor));
}

std::string StreamedTensorFile::header_bytes() const {
  std::string out;
  auto put_raw = [&out](const void* bytes, size_t size) { out.append(static_cast<const char*>(bytes), size); };
  if (format_ == Format::safetensors) {
    nlohmann::json header = nlohmann::json::object();
    nlohmann::json metadata = nlohmann::json::object();
    for (const auto& [key, value] : strings_) metadata[key] = value;
    for (const auto& [key, value] : numbers_) metadata[key] = std::to_string(value);
    if (!metadata.empty()) header["__metadata__"] = metadata;
    for (const Declared& tensor : tensors_)
      header[tensor.name] = {{"dtype", tensor_encoding_name(tensor.encoding)},
                             {"shape", tensor.shape},
                             {"data_offsets", {tensor.offset, tensor.offset + tensor.bytes}}};
    std::string text = header.dump();
    text.resize(streamed_aligned(text.size(), 8), ' ');
    const uint64_t length = text.size();
    put_raw(&length, 8);
    return out + text;
  }
  auto put_u32 = [&](uint32_t value) { put_raw(&value, 4); };
  auto put_u64 = [&](uint64_t value) { put_raw(&value, 8); };
  auto put_string = [&](const std::string& text) {
    put_u64(text.size());
    out += text;
  };
  put_raw("GGUF", 4);
  put_u32(3);
  put_u64(tensors_.size());
  put_u64(strings_.size() + numbers_.size());
  for (const auto& [key, value] : numbers_) {
    put_string(key);
    put_u32(4);  // UINT32
    put_u32(value);
  }
  for (const auto& [key, value] : strings_) {
    put_string(key);
    put_u32(8);  // STRING
    put_string(value);
  }
  for (const Declared& tensor : tensors_) {
    put_string(tensor.name);
    put_u32(uint32_t(tensor.shape.size()));
    for (auto extent = tensor.shape.rbegin(); extent != tensor.shape.rend(); ++extent) put_u64(uint64_t(*extent));
    put_u32(uint32_t(ggml_type_of(tensor.encoding)));
    put_u64(tensor.offset);
  }
  out.resize(streamed_aligned(out.size(), kStreamedGgufAlignment), '\0');
  return out;
}

uint64_t StreamedTensorFile::planned_bytes() const { return header_bytes().size() + data_bytes_; }

void StreamedTensorFile::put(const void* bytes, size_t size) {
  if (std::fwrite(bytes, 1, size, file_) != size)
    throw IoError(path_ + ": cannot write '" + partial_path_ + "': " + std::strerror(errno));
}

void StreamedTensorFile::write_header() {
  file_ = std::fopen(partial_path_.c_str(), "wb");
  if (!file_) throw IoError(path_ + ": cannot create '" + partial_path_ + "': " + std::strerror(errno));
  const std::string header = header_bytes();
  put(header.data(), header.size());
}

void StreamedTensorFile::begin() {
  if (!file_) write_header();
}

void StreamedTensorFile::write_next(const std::string& name, const at::Tensor& values) {
  if (next_ >= tensors_.size() || tensors_[next_].name != name)
    throw InvalidArgumentError(path_ + ": tensor " + name + " written out of the declared order");
  const Declared& tensor = tensors_[next_];
  if (values.sizes().vec() != tensor.shape)
    throw InvalidArgumentError(path_ + ": tensor " + name + " has another shape than declared");
  if (!file_) write_header();
  const std::vector<uint8_t> bytes = encode_tensor(values, tensor.encoding);
  put(bytes.data(), bytes.size());
  if (format_ == Format::gguf) {
    static const uint8_t zeros[kStreamedGgufAlignment] = {};
    put(zeros, streamed_aligned(bytes.size(), kStreamedGgufAlignment) - bytes.size());
  }
  ++next_;
}

void StreamedTensorFile::finish() {
  if (next_ != tensors_.size())
    throw InvalidArgumentError(path_ + ": " + std::to_string(tensors_.size() - next_) + " declared tensors not written");
  if (!file_) write_header();
  if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0)
    throw IoError(path_ + ": cannot flush '" + partial_path_ + "': " + std::strerror(errno));
  std::fclose(file_);
  file_ = nullptr;
  if (std::rename(partial_path_.c_str(), path_.c_str()) != 0)
    throw IoError(path_ + ": cannot rename '" + partial_path_ + "' into place: " + std::strerror(errno));
  finished_ = true;
}

}  // namespace flashps
