#include "models/loading/model_files.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "core/files/content_hash.h"
#include "core/diagnostics/error.h"
#include "core/files/json_file.h"

namespace flashps {

nlohmann::json read_component_config(const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) throw NotFoundError(dir + ": model folder does not exist");
  const fs::path config = fs::path(dir) / "config.json";
  if (!fs::exists(config)) throw NotFoundError(dir + ": not a model folder (no config.json)");
  return read_json_file(config.string());
}

std::vector<std::shared_ptr<const SafetensorsFile>> open_component_weights(const std::string& dir,
                                                                           const std::string& base) {
  namespace fs = std::filesystem;
  const fs::path single = fs::path(dir) / (base + ".safetensors");
  if (fs::exists(single)) return {SafetensorsFile::open(single.string())};
  const fs::path index = fs::path(dir) / (base + ".safetensors.index.json");
  if (!fs::exists(index))
    throw NotFoundError(dir + ": no weights (" + single.filename().string() + " or " + index.filename().string() + ")");
  nlohmann::json json = read_json_file(index.string());
  std::set<std::string> shards;
  try {
    for (const auto& [key, file] : json.at("weight_map").items()) shards.insert(file.get<std::string>());
  } catch (const nlohmann::json::exception& error) {
    throw CorruptDataError(index.string() + ": invalid shard index: " + error.what());
  }
  std::vector<std::shared_ptr<const SafetensorsFile>> files;
  for (const std::string& shard : shards) {
    if (shard.find('/') != std::string::npos || shard.find("..") != std::string::npos)
      throw CorruptDataError(index.string() + ": shard name '" + shard + "' must be a plain file name");
    const fs::path shard_path = fs::path(dir) / shard;
    if (!fs::exists(shard_path))
      throw NotFoundError(index.string() + ": names shard '" + shard + "', which is not in " + dir);
    files.push_back(SafetensorsFile::open(shard_path.string()));
  }
  return files;
}

std::string model_fingerprint(const std::string& dir, const std::vector<std::string>& components,
                              const std::vector<std::string>& weighted) {
  namespace fs = std::filesystem;
  ContentHasher hasher;
  for (const std::string& component : components) {
    for (const char* file : {"config.json", "scheduler_config.json"}) {
      const fs::path path = fs::path(dir) / component / file;
      if (fs::exists(path)) hasher.update(read_json_file(path.string()).dump());
    }
  }
  for (const std::string& component : weighted) {
    const fs::path folder = fs::path(dir) / component;
    std::string base;
    for (const char* candidate : {"diffusion_pytorch_model", "model"})
      if (base.empty() && (fs::exists(folder / (std::string(candidate) + ".safetensors")) ||
                           fs::exists(folder / (std::string(candidate) + ".safetensors.index.json"))))
        base = candidate;
    if (base.empty()) continue;
    for (const auto& weights : open_component_weights(folder.string(), base)) {
      for (const TensorInfo& tensor : weights->tensors()) {
        hasher.update(tensor.name);
        hasher.update(tensor.shape.data(), tensor.shape.size() * sizeof(int64_t));
        hasher.update(weights->data(tensor), std::min<size_t>(tensor.byte_size(), 64));
      }
    }
  }
  return hasher.hex();
}

void fingerprint_stored_tensor(ContentHasher& hasher, const std::string& name, const std::vector<int64_t>& shape,
                               const std::string& stored_as, const uint8_t* bytes, size_t byte_size) {
  constexpr size_t kSample = 64;
  hasher.update(name);
  hasher.update(shape.data(), shape.size() * sizeof(int64_t));
  hasher.update(stored_as);
  const uint64_t size = byte_size;
  hasher.update(&size, sizeof(size));
  const size_t middle = byte_size / 2 > kSample / 2 ? byte_size / 2 - kSample / 2 : 0;
  const size_t tail = byte_size > kSample ? byte_size - kSample : 0;
  for (const size_t offset : {size_t{0}, middle, tail}) hasher.update(bytes + offset, std::min(kSample, byte_size - offset));
}

}  // namespace flashps
