#include "models/loading/checkpoint_tensors.h"

#include <ATen/ATen.h>

#include "core/diagnostics/error.h"
#include "core/files/gguf_file.h"
#include "core/files/safetensors.h"
#include "core/files/tensor_io.h"

namespace flashps {
namespace {

bool is_floating(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16 || dtype == DType::F64 ||
         dtype == DType::F8_E4M3 || dtype == DType::F8_E5M2;
}

class SafetensorsTensors : public CheckpointTensors {
 public:
  SafetensorsTensors(const std::vector<const SafetensorsFile*>& files,
                     std::vector<std::shared_ptr<const SafetensorsFile>> owned)
      : owned_(std::move(owned)) {
    for (const SafetensorsFile* file : files) {
      source_ += (source_.empty() ? "" : ", ") + file->source_name();
      for (const TensorInfo& info : file->tensors()) {
        entries_[info.name] = {info.shape, dtype_safetensors_name(info.dtype), is_floating(info.dtype),
                               file->source_name()};
        where_[info.name] = {file, &info};
      }
    }
  }
  const std::string& source() const override { return source_; }
  const std::map<std::string, CheckpointEntry>& entries() const override { return entries_; }
  at::Tensor read(const std::string& key) const override {
    const auto& [file, info] = locate(key);
    return mapped_tensor(*file, *info);
  }
  void release(const std::string& key) const override {
    const auto& [file, info] = locate(key);
    file->release_pages(*info);
  }

 private:
  const std::pair<const SafetensorsFile*, const TensorInfo*>& locate(const std::string& key) const {
    const auto found = where_.find(key);
    if (found == where_.end()) throw NotFoundError(source_ + ": no tensor '" + key + "'");
    return found->second;
  }
  std::vector<std::shared_ptr<const SafetensorsFile>> owned_;  // empty when the caller keeps the files
  std::string source_;
  std::map<std::string, CheckpointEntry> entries_;
  std::map<std::string, std::pair<const SafetensorsFile*, const TensorInfo*>> where_;
};

class GgufTensors : public CheckpointTensors {
 public:
  explicit GgufTensors(std::shared_ptr<const GgufFile> file) : file_(std::move(file)), source_(file_->source_name()) {
    for (const GgufTensor& tensor : file_->tensors()) {
      entries_[tensor.name] = {tensor.shape, ggml_type_name(uint32_t(tensor.type)), true, source_};
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
