#include "cache/file_capture_store.h"

#include <ATen/ATen.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "core/content_hash.h"
#include "core/error.h"
#include "engine/row_gather.h"
#include "core/safetensors.h"
#include "core/tensor_io.h"

namespace flashps {
namespace {

std::string entry_name(const engine::EntryKey& key) {
  return "s" + std::to_string(key.step) + ".b" + std::to_string(key.block) + "." +
         engine::slot_name(key.slot);
}

class FileCapture : public engine::Capture {
 public:
  explicit FileCapture(std::shared_ptr<const SafetensorsFile> file) : file_(std::move(file)) {
    for (const TensorInfo& info : file_->tensors()) bytes_ += static_cast<int64_t>(info.byte_size());
  }
  bool contains(const engine::EntryKey& key) const override {
    return file_->find(entry_name(key)) != nullptr;
  }
  at::Tensor read_rows(const engine::EntryKey& key, const at::Tensor& rows) const override {
    const TensorInfo* info = file_->find(entry_name(key));
    if (!info) throw Error(file_->source_name() + ": no entry " + entry_name(key));
    if (info->shape.size() != 2) throw Error(file_->source_name() + ": entry " + info->name + " is not 2-D");
    // Zero-copy view of the mapped bytes; index_select copies only the requested rows.
    at::Tensor mapped = at::from_blob(const_cast<uint8_t*>(file_->data(*info)), info->shape,
                                      at::TensorOptions().dtype(to_scalar_type(info->dtype)));
    return engine::gather_rows_single_thread(mapped, rows);
  }
  int64_t bytes() const override { return bytes_; }

 private:
  std::shared_ptr<const SafetensorsFile> file_;
  int64_t bytes_ = 0;
};

class FileCaptureWriter : public engine::CaptureWriter {
 public:
  FileCaptureWriter(std::string path, engine::CaptureId id) : path_(std::move(path)), id_(std::move(id)) {}
  void put(const engine::EntryKey& key, const at::Tensor& rows) override {
    entries_.emplace_back(entry_name(key), rows.detach().to(at::kCPU).contiguous().clone());
  }
  std::shared_ptr<const engine::Capture> commit() override {
    save_safetensors(path_, entries_,
                     {{"format", "pt"},
                      {"flashps_template", id_.template_hash},
                      {"flashps_model", id_.model_fingerprint},
                      {"flashps_config", id_.config}});
    entries_.clear();
    return std::make_shared<FileCapture>(SafetensorsFile::open(path_));
  }

 private:
  std::string path_;
  engine::CaptureId id_;
  std::vector<std::pair<std::string, at::Tensor>> entries_;
};

}  // namespace

FileCaptureStore::FileCaptureStore(std::string directory) : directory_(std::move(directory)) {
  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  if (!std::filesystem::is_directory(directory_))
    throw Error(directory_ + ": cannot create the capture directory");
}

std::string FileCaptureStore::path_for(const engine::CaptureId& id) const {
  return (std::filesystem::path(directory_) / (ContentHasher().update(id.text()).hex() + ".safetensors")).string();
}

std::shared_ptr<const engine::Capture> FileCaptureStore::find(const engine::CaptureId& id) {
  const std::string path = path_for(id);
  if (!std::filesystem::exists(path)) return nullptr;
  try {
    auto file = SafetensorsFile::open(path);
    auto found = file->metadata().find("flashps_config");
    if (found == file->metadata().end() || found->second != id.config) return nullptr;
    return std::make_shared<FileCapture>(std::move(file));
  } catch (const Error&) {
    return nullptr;  // a damaged capture is a miss: the edit computes in full
  }
}

std::unique_ptr<engine::CaptureWriter> FileCaptureStore::begin(const engine::CaptureId& id) {
  return std::make_unique<FileCaptureWriter>(path_for(id), id);
}

std::string default_capture_directory() {
  if (const char* dir = std::getenv("FLASHPS_CACHE_DIR")) return dir;
  std::filesystem::path base;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME")) base = xdg;
  else if (const char* home = std::getenv("HOME")) base = std::filesystem::path(home) / ".cache";
  else base = std::filesystem::temp_directory_path();
  return (base / "flashps" / "captures").string();
}

}  // namespace flashps
