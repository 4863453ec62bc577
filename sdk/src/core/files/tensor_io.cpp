#include "core/files/tensor_io.h"

#include <ATen/ATen.h>

#include <cstring>

#include "core/diagnostics/error.h"
#include "core/quant/small_floats.h"

namespace flashps {

at::ScalarType to_scalar_type(DType dtype) {
  switch (dtype) {
    case DType::F64:
      return at::kDouble;
    case DType::F32:
      return at::kFloat;
    case DType::F16:
      return at::kHalf;
    case DType::BF16:
      return at::kBFloat16;
    case DType::I64:
      return at::kLong;
    case DType::I32:
      return at::kInt;
    case DType::I16:
      return at::kShort;
    case DType::I8:
      return at::kChar;
    case DType::U8:
      return at::kByte;
    case DType::BOOL:
      return at::kBool;
    case DType::F8_E4M3:
    case DType::F8_E5M2:
      break;  // LibTorch 1.13 has no float8: read_tensor decodes them to float32
  }
  throw Error("safetensors dtype value " + std::to_string(static_cast<int>(dtype)) +
              " has no LibTorch equivalent");
}

DType to_dtype(at::ScalarType type) {
  switch (type) {
    case at::kDouble:
      return DType::F64;
    case at::kFloat:
      return DType::F32;
    case at::kHalf:
      return DType::F16;
    case at::kBFloat16:
      return DType::BF16;
    case at::kLong:
      return DType::I64;
    case at::kInt:
      return DType::I32;
    case at::kShort:
      return DType::I16;
    case at::kChar:
      return DType::I8;
    case at::kByte:
      return DType::U8;
    case at::kBool:
      return DType::BOOL;
    default:
      throw Error(std::string("tensor dtype ") + c10::toString(type) +
                  " cannot be stored in safetensors");
  }
}

namespace {

bool is_float8(DType dtype) { return dtype == DType::F8_E4M3 || dtype == DType::F8_E5M2; }

// float8 values widened to a float32 tensor (exact: every float8 value is a float32 value).
at::Tensor decode_float8(const uint8_t* bytes, const TensorInfo& info) {
  at::Tensor tensor = at::empty(info.shape, at::TensorOptions().dtype(at::kFloat).device(at::kCPU));
  float* out = tensor.data_ptr<float>();
  const int64_t count = info.element_count();
  const bool e4m3 = info.dtype == DType::F8_E4M3;
  for (int64_t i = 0; i < count; ++i)
    out[i] = e4m3 ? float8_e4m3fn_to_float(bytes[i]) : float8_e5m2_to_float(bytes[i]);
  return tensor;
}

}  // namespace

at::Tensor read_tensor(const SafetensorsFile& file, const TensorInfo& info) {
  // Only the file's own TensorInfo is trusted: its offsets were validated against the buffer.
  const TensorInfo* own = file.find(info.name);
  if (own == nullptr || own->begin != info.begin || own->end != info.end ||
      own->dtype != info.dtype || own->shape != info.shape) {
    throw Error(file.source_name() + ": tensor '" + info.name + "' does not belong to this file");
  }
  if (is_float8(info.dtype)) return decode_float8(file.data(*own), info);
  // BOOL is read as bytes and normalised, since a byte other than 0/1 in a kBool tensor is UB.
  const at::ScalarType storage_type =
      info.dtype == DType::BOOL ? at::kByte : to_scalar_type(info.dtype);
  at::Tensor tensor =
      at::empty(info.shape, at::TensorOptions().dtype(storage_type).device(at::kCPU));
  if (info.byte_size() > 0) std::memcpy(tensor.data_ptr(), file.data(*own), own->byte_size());
  if (info.dtype == DType::BOOL) tensor = tensor.ne(0);
  return tensor;
}

at::Tensor mapped_tensor(const SafetensorsFile& file, const TensorInfo& info) {
  const TensorInfo* own = file.find(info.name);
  if (own == nullptr || own->begin != info.begin || own->end != info.end || info.dtype == DType::BOOL ||
      is_float8(info.dtype) || info.byte_size() == 0)
    return read_tensor(file, info);  // BOOL bytes need normalising, float8 decoding; a foreign info is refused there
  const at::ScalarType type = to_scalar_type(info.dtype);
  const uint8_t* bytes = file.data(*own);
  if (reinterpret_cast<uintptr_t>(bytes) % c10::elementSize(type) != 0) return read_tensor(file, info);
  // from_blob takes a mutable pointer; nothing writes through it (see the header).
  return at::from_blob(const_cast<uint8_t*>(bytes), info.shape, at::TensorOptions().dtype(type).device(at::kCPU));
}

std::map<std::string, at::Tensor> load_safetensors(const std::string& path) {
  auto file = SafetensorsFile::open(path);
  std::map<std::string, at::Tensor> tensors;
  for (const TensorInfo& info : file->tensors())
    tensors.emplace(info.name, read_tensor(*file, info));
  return tensors;
}

void save_safetensors(const std::string& path,
                      const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  SafetensorsWriter writer;
  for (const auto& [name, tensor] : tensors) {
    if (!tensor.defined()) throw Error(path + ": tensor '" + name + "' is undefined");
    DType dtype;
    try {
      dtype = to_dtype(tensor.scalar_type());
    } catch (const Error& error) {
      throw Error(path + ": tensor '" + name + "': " + error.what());
    }
    const at::Tensor cpu = tensor.detach().to(at::kCPU).contiguous();
    writer.add(name, dtype, cpu.sizes().vec(), cpu.data_ptr(), cpu.nbytes());
  }
  for (const auto& [key, value] : metadata) writer.set_metadata(key, value);
  writer.write(path);
}

}  // namespace flashps
