#include "models/loading/checkpoint_tensors.h"

#include <ATen/ATen.h>

#include "core/diagnostics/error.h"
#include "core/files/gguf_file.h"
#include "core/files/safetensors.h"
#include "core/files/tensor_io.h"
#include "core/quant/quantized_matrix.h"

#include <cmath>

namespace flashps {
namespace {

bool checkpoint_is_float8(DType dtype) { return dtype == DType::F8_E4M3 || dtype == DType::F8_E5M2; }

bool is_floating(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16 || dtype == DType::F64 ||
         dtype == DType::F8_E4M3 || dtype == DType::F8_E5M2;
}

bool key_ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

class SafetensorsTensors : public CheckpointTensors {
 public:
  SafetensorsTensors(const std::vector<const SafetensorsFile*>& files,
                     std::vector<std::shared_ptr<const SafetensorsFile>> owned)
      : owned_(std::move(owned)) {
    for (const SafetensorsFile* file : files) {
      source_ += (source_.empty() ? "" : ", ") + file->source_name();
      for (const TensorInfo& info : file->tensors()) where_[info.name] = {file, &info};
    }
    // Scaled fp8 (ComfyUI): `<module>.scale_weight` multiplies the fp8 `<module>.weight`.
    std::map<std::string, bool> hidden;
    for (const auto& [name, location] : where_) {
      for (const char* suffix : {".scale_weight", ".scale_input"}) {
        if (!key_ends_with(name, suffix)) continue;
        const std::string weight = name.substr(0, name.size() - std::string(suffix).size()) + ".weight";
        const auto found = where_.find(weight);
        if (found == where_.end() || !checkpoint_is_float8(found->second.second->dtype)) continue;
        hidden[name] = true;
        if (std::string(suffix) == ".scale_weight") scales_[weight] = name;
      }
      if (name == "scaled_fp8" || key_ends_with(name, ".scaled_fp8")) hidden[name] = true;  // the marker
    }
    for (const auto& [name, location] : where_) {
      if (hidden.count(name)) continue;
      const auto& [file, info] = location;
      CheckpointEntry entry{info->shape, dtype_safetensors_name(info->dtype), is_floating(info->dtype),
                            file->source_name()};
      if (scales_.count(name)) entry.stored_as += " scaled by " + scales_[name];
      entry.quantized = checkpoint_is_float8(info->dtype) && info->shape.size() == 2 && owner_of(file) != nullptr;
      entries_[name] = entry;
    }
  }
  const std::string& source() const override { return source_; }
  const std::map<std::string, CheckpointEntry>& entries() const override { return entries_; }
  at::Tensor read(const std::string& key) const override {
    const auto& [file, info] = locate(key);
    const at::Tensor stored = mapped_tensor(*file, *info);
    const auto scale = scales_.find(key);
    return scale == scales_.end() ? stored : stored * scale_value(key, scale->second);
  }
  void release(const std::string& key) const override {
    const auto& [file, info] = locate(key);
    file->release_pages(*info);
  }
  std::shared_ptr<const QuantizedMatrix> read_quantized(const std::string& key) const override {
    const auto entry = entries_.find(key);
    if (entry == entries_.end() || !entry->second.quantized) return nullptr;
    const auto& [file, info] = locate(key);
    const auto scale = scales_.find(key);
    const float factor = scale == scales_.end() ? 1.0f : scale_value(key, scale->second);
    const auto encoding = info->dtype == DType::F8_E4M3 ? QuantizedEncoding::float8_e4m3fn()
                                                        : QuantizedEncoding::float8_e5m2();
    return std::make_shared<QuantizedMatrix>(encoding, info->shape[1],
                                             std::vector<QuantizedSegment>{{file->data(*info), info->shape[0], factor}},
                                             std::vector<std::shared_ptr<const void>>{owner_of(file)},
                                             file->source_name() + ": " + key);
  }

 private:
  const std::pair<const SafetensorsFile*, const TensorInfo*>& locate(const std::string& key) const {
    const auto found = where_.find(key);
    if (found == where_.end() || !entries_.count(key)) throw NotFoundError(source_ + ": no tensor '" + key + "'");
    return found->second;
  }
  std::shared_ptr<const SafetensorsFile> owner_of(const SafetensorsFile* file) const {
    for (const auto& owned : owned_)
      if (owned.get() == file) return owned;
    return nullptr;
  }
  // A scaled fp8 weight's factor: one finite value.
  float scale_value(const std::string& weight, const std::string& scale_key) const {
    const auto& [file, info] = where_.at(scale_key);
    const at::Tensor scale = mapped_tensor(*file, *info).to(at::kFloat);
    if (scale.numel() != 1 || !std::isfinite(scale.item<float>()))
      throw CorruptDataError(file->source_name() + ": " + scale_key + ", the scale of " + weight +
                             (scale.numel() != 1 ? ", holds " + std::to_string(scale.numel()) + " values, not one"
                                                 : ", is not a finite number"));
    return scale.item<float>();
  }
  std::vector<std::shared_ptr<const SafetensorsFile>> owned_;  // empty when the caller keeps the files
  std::string source_;
  std::map<std::string, CheckpointEntry> entries_;
  std::map<std::string, std::pair<const SafetensorsFile*, const TensorInfo*>> where_;
  std::map<std::string, std::string> scales_;  // fp8 weight key -> its scale_weight key
};

class GgufTensors : public CheckpointTensors {
 public:
  explicit GgufTensors(std::shared_ptr<const GgufFile> file) : file_(std::move(file)), source_(file_->source_name()) {
    for (const GgufTensor& tensor : file_->tensors()) {
      CheckpointEntry entry{tensor.shape, ggml_type_name(uint32_t(tensor.type)), true, source_};
      const GgmlTypeTraits* traits = ggml_type_traits(uint32_t(tensor.type));
      entry.quantized = traits && traits->block_size > 1 && tensor.shape.size() == 2;
      entries_[tensor.name] = entry;
    }
  }
  const std::string& source() const override { return source_; }
  const std::map<std::string, CheckpointEntry>& entries() const override { return entries_; }
  at::Tensor read(const std::string& key) const override {
    const GgufTensor& tensor = locate(key);
    at::Tensor values = at::empty(tensor.shape, at::TensorOptions().dtype(at::kFloat).device(at::kCPU));
    file_->dequantize(tensor, values.data_ptr<float>());
    return values;
  }
  void release(const std::string& key) const override { file_->release_pages(locate(key)); }
  std::shared_ptr<const QuantizedMatrix> read_quantized(const std::string& key) const override {
    const auto entry = entries_.find(key);
    if (entry == entries_.end() || !entry->second.quantized) return nullptr;
    const GgufTensor& tensor = locate(key);
    return std::make_shared<QuantizedMatrix>(QuantizedEncoding::ggml(tensor.type), tensor.shape[1],
                                             std::vector<QuantizedSegment>{{file_->data(tensor), tensor.shape[0]}},
                                             std::vector<std::shared_ptr<const void>>{file_}, source_ + ": " + key);
  }

 private:
  const GgufTensor& locate(const std::string& key) const {
    const GgufTensor* tensor = file_->find(key);
    if (!tensor) throw NotFoundError(source_ + ": no tensor '" + key + "'");
    return *tensor;
  }
  std::shared_ptr<const GgufFile> file_;
  std::string source_;
  std::map<std::string, CheckpointEntry> entries_;
};

}  // namespace

std::shared_ptr<const QuantizedMatrix> CheckpointTensors::read_quantized(const std::string&) const { return nullptr; }

std::unique_ptr<CheckpointTensors> safetensors_tensors(std::vector<std::shared_ptr<const SafetensorsFile>> files) {
  std::vector<const SafetensorsFile*> views;
  for (const auto& file : files) views.push_back(file.get());
  return std::make_unique<SafetensorsTensors>(views, std::move(files));
}

std::unique_ptr<CheckpointTensors> safetensors_tensors_view(const std::vector<const SafetensorsFile*>& files) {
  return std::make_unique<SafetensorsTensors>(files, std::vector<std::shared_ptr<const SafetensorsFile>>{});
}

std::unique_ptr<CheckpointTensors> gguf_tensors(std::shared_ptr<const GgufFile> file) {
  return std::make_unique<GgufTensors>(std::move(file));
}

}  // namespace flashps
