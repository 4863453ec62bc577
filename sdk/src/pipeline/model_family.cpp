#include "pipeline/model_family.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_file.h"

namespace flashps {

const char* model_family_name(ModelFamily family) {
  return family == ModelFamily::flux ? "Flux" : "Stable Diffusion";
}

ModelFamily detect_model_family(const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) throw NotFoundError(dir + ": model folder does not exist");
  const fs::path index_path = fs::path(dir) / "model_index.json";
  std::string class_name;
  if (fs::exists(index_path)) {
    const nlohmann::json index = read_json_file(index_path.string());
    if (!index.is_object()) throw CorruptDataError(index_path.string() + ": must hold a JSON object");
    const auto found = index.find("_class_name");
    if (found != index.end() && found->is_string()) class_name = found->get<std::string>();
  }
  if (class_name.rfind("StableDiffusion", 0) == 0) return ModelFamily::stable_diffusion;
  if (fs::exists(fs::path(dir) / "transformer" / "config.json")) return ModelFamily::flux;
  if (class_name.rfind("Flux", 0) == 0)
    throw NotFoundError(dir + ": " + class_name + " folder without transformer/config.json");
  if (!class_name.empty())
    throw UnsupportedError(index_path.string() + ": pipeline class \"" + class_name +
                           "\" is neither a Flux nor a Stable Diffusion pipeline");
  throw NotFoundError(dir + ": not a model folder (no model_index.json naming a StableDiffusion pipeline, and no "
                            "transformer/config.json)");
}

}  // namespace flashps
