// `flashps model info`: what a model folder or file is, without loading its weights: family and
// variant, parameter count, stored types per tensor group, which components are present and
// which must be passed (with the flag), and the fingerprint captures are keyed by.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "pipeline/inpaint_model.h"

namespace flashps {

// JSON object: path, format ("folder", "safetensors", "gguf"), family, variant, description,
// configs (where they come from), layout, parameters, tensor_groups [{group, prefix, tensors,
// parameters, stored_as {type: count}}], components {name: {present, from | flag, message}},
// fingerprint. Errors as ModelSource::read (unsupported files say what they look like).
nlohmann::json inspect_model(const std::string& path, const ModelFiles& files = {});

}  // namespace flashps
