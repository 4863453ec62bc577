// Locating a diffusers component's files: config.json and its safetensors weights, either one
// file or shards listed in "<base>.safetensors.index.json".
#pragma once
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/files/safetensors.h"

namespace flashps {

// Reads <dir>/config.json; Error "<dir>: not a model folder (no config.json)" if absent.
nlohmann::json read_component_config(const std::string& dir);

// Opens <dir>/<base>.safetensors, or every shard named by <dir>/<base>.safetensors.index.json.
std::vector<std::shared_ptr<const SafetensorsFile>> open_component_weights(
    const std::string& dir, const std::string& base = "diffusion_pytorch_model");

// A model folder's identity for activation caches: the configs of `components` and, for every
// tensor of the `weighted` components' weights, its name, shape and first bytes (retrained
// weights with the same layout still differ). A component without weights files (a weightless
// autoencoder, fully described by its config) adds nothing.
std::string model_fingerprint(const std::string& dir, const std::vector<std::string>& components,
                              const std::vector<std::string>& weighted);

class ContentHasher;

// One tensor of a model file, as stored, into a fingerprint (single files, GGUF, component
// files): its name, shape, stored type ("F16", "Q8_0", "F8_E4M3", ...), byte size and bytes
// sampled at its start, middle and end, so the same weights stored another way (f16 or Q8_0)
// or retrained differ.
void fingerprint_stored_tensor(ContentHasher& hasher, const std::string& name, const std::vector<int64_t>& shape,
                               const std::string& stored_as, const uint8_t* bytes, size_t byte_size);

}  // namespace flashps
