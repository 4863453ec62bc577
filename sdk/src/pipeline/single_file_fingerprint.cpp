#include "pipeline/single_file_fingerprint.h"

#include <filesystem>

#include "core/files/content_hash.h"
#include "models/loading/model_files.h"

namespace flashps {
namespace {

void fingerprint_file_tensors(ContentHasher& hasher, const CheckpointSource& file) {
  hasher.update(file.format);
  for (const auto& [key, entry] : file.tensors->entries()) {
    const auto [bytes, size] = file.stored_bytes(key);
    fingerprint_stored_tensor(hasher, key, entry.shape, entry.stored_as, bytes, size);
  }
}

// A component given as a file or as a diffusers component folder.
void fingerprint_component(ContentHasher& hasher, const std::string& role, const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) return;
  hasher.update("component " + role);
  if (fs::is_directory(path)) {
    const fs::path folder = fs::path(path).lexically_normal();
    const fs::path name = folder.has_filename() ? folder.filename() : folder.parent_path().filename();
    const fs::path parent = folder.has_filename() ? folder.parent_path() : folder.parent_path().parent_path();
    hasher.update(model_fingerprint(parent.string(), {name.string()}, {name.string()}));
  } else {
    fingerprint_file_tensors(hasher, *open_checkpoint_source(path));
  }
}

}  // namespace

std::string single_file_fingerprint(const ModelSource& source) {
  ContentHasher hasher;
  hasher.update("single-file model");
  hasher.update(source.recognised.type->name);
  for (const char* config : {"model_index.json", "transformer/config.json", "unet/config.json", "vae/config.json",
                             "text_encoder/config.json", "text_encoder_2/config.json",
                             "scheduler/scheduler_config.json"})
    hasher.update(std::string(config) + "=" + source.config(config).dump());
  fingerprint_file_tensors(hasher, *source.file);
  fingerprint_component(hasher, "vae", source.files.vae);
  fingerprint_component(hasher, "text_encoder", source.files.text_encoder);
  fingerprint_component(hasher, "text_encoder_2", source.files.text_encoder_2);
  return hasher.hex();
}

}  // namespace flashps
