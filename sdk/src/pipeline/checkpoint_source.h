// One model file as users keep it (a single-file .safetensors checkpoint or a .gguf file), opened
// once for recognition, `flashps model info`, the fingerprint and loading: its tensors under their
// stored keys, its text metadata (safetensors "__metadata__", GGUF string values) and, for files
// FlashPS wrote, the diffusers folder's small files it carries ("flashps.files").
#pragma once
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "models/loading/checkpoint_tensors.h"

namespace flashps {

class SafetensorsFile;
class GgufFile;

struct CheckpointSource {
  std::string path;
  std::string format;  // "safetensors" or "gguf"
  std::shared_ptr<const CheckpointTensors> tensors;  // stored keys
  std::map<std::string, std::string> metadata;       // text metadata (GGUF: string values only)
  // {"<relative path in a diffusers folder>": "<content>"} of a FlashPS-written file; null otherwise.
  nlohmann::json carried_files;
  std::shared_ptr<const SafetensorsFile> safetensors;  // the one that is open
  std::shared_ptr<const GgufFile> gguf;

  // The stored bytes of `key` (for the fingerprint; no decoding): pointer and size.
  std::pair<const uint8_t*, size_t> stored_bytes(const std::string& key) const;
  // A carried file's text ("" when absent); a JSON file of them parsed (null when absent).
  std::string carried_text(const std::string& relative) const;
  nlohmann::json carried_json(const std::string& relative) const;
};

// `file`'s tensors but those FlashPS adds to files it writes ("flashps.empty_prompt.*"): the
// denoiser of a file whose model keys carry no prefix (a bare Flux transformer, a GGUF file).
std::unique_ptr<CheckpointTensors> model_tensors_of(std::shared_ptr<const CheckpointTensors> file);

// Opens `path` by content (GGUF magic, else safetensors). Pickled checkpoints are refused
// (models/loading/checkpoint_file.h says why); errors name the file.
std::shared_ptr<const CheckpointSource> open_checkpoint_source(const std::string& path);

}  // namespace flashps
