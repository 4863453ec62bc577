#include "pipeline/checkpoint_source.h"

#include <fstream>

#include "core/diagnostics/error.h"
#include "core/files/gguf_file.h"
#include "core/files/safetensors.h"
#include "models/loading/checkpoint_file.h"

namespace flashps {
namespace {

// Every key but those under "flashps.", over a shared file.
class WithoutFlashpsKeys final : public CheckpointTensors {
 public:
  explicit WithoutFlashpsKeys(std::shared_ptr<const CheckpointTensors> file) : file_(std::move(file)) {
    for (const auto& [key, entry] : file_->entries())
      if (key.rfind("flashps.", 0) != 0) entries_[key] = entry;
  }
  const std::string& source() const override { return file_->source(); }
  const std::map<std::string, CheckpointEntry>& entries() const override { return entries_; }
  at::Tensor read(const std::string& key) const override { return file_->read(key); }
  void release(const std::string& key) const override { file_->release(key); }

 private:
  std::shared_ptr<const CheckpointTensors> file_;
  std::map<std::string, CheckpointEntry> entries_;
};

nlohmann::json parse_carried_files(const CheckpointSource& source) {
  const auto found = source.metadata.find("flashps.files");
  if (found == source.metadata.end()) return nullptr;
  nlohmann::json files = nlohmann::json::parse(found->second, nullptr, false);
  if (!files.is_object())
    throw CorruptDataError(source.path + ": metadata \"flashps.files\" must be a JSON object of file texts");
  for (const auto& [name, content] : files.items())
    if (!content.is_string())
      throw CorruptDataError(source.path + ": metadata \"flashps.files\" entry \"" + name + "\" must be a string");
  return files;
}

}  // namespace

std::pair<const uint8_t*, size_t> CheckpointSource::stored_bytes(const std::string& key) const {
  if (safetensors) {
    const TensorInfo* info = safetensors->find(key);
    if (info) return {safetensors->data(*info), info->byte_size()};
  } else if (gguf) {
    const GgufTensor* tensor = gguf->find(key);
    if (tensor) return {gguf->data(*tensor), tensor->byte_size};
  }
  throw NotFoundError(path + ": no tensor '" + key + "'");
}

std::string CheckpointSource::carried_text(const std::string& relative) const {
  if (!carried_files.is_object()) return "";
  const auto found = carried_files.find(relative);
  return found == carried_files.end() ? std::string() : found->get<std::string>();
}

nlohmann::json CheckpointSource::carried_json(const std::string& relative) const {
  const std::string text = carried_text(relative);
  if (text.empty()) return nullptr;
  nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded())
    throw CorruptDataError(path + ": the carried file \"" + relative + "\" (flashps.files) is not valid JSON");
  return json;
}

std::unique_ptr<CheckpointTensors> model_tensors_of(std::shared_ptr<const CheckpointTensors> file) {
  return std::make_unique<WithoutFlashpsKeys>(std::move(file));
}

std::shared_ptr<const CheckpointSource> open_checkpoint_source(const std::string& path) {
  refuse_pickled_checkpoint(path);  // also NotFoundError for a missing file
  char magic[4] = {};
  {
    std::ifstream stream(path, std::ios::binary);
    stream.read(magic, 4);
  }
  auto source = std::make_shared<CheckpointSource>();
  source->path = path;
  if (std::string(magic, 4) == "GGUF") {
    source->format = "gguf";
    source->gguf = GgufFile::open(path);
    for (const auto& [key, value] : source->gguf->metadata())
      if (value.type == GgufValueType::STRING) source->metadata[key] = value.string_value;
    source->tensors = gguf_tensors(source->gguf);
  } else {
    if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".gguf") == 0)
      throw CorruptDataError(path + ": named .gguf but it does not start with \"GGUF\"");
    source->format = "safetensors";
    source->safetensors = SafetensorsFile::open(path);
    source->metadata = source->safetensors->metadata();
    source->tensors = safetensors_tensors({source->safetensors});
  }
  source->carried_files = parse_carried_files(*source);
  return source;
}

}  // namespace flashps
