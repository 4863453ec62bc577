#include <nlohmann/json.hpp>

#include "models/flux/flux_transformer.h"
#include "models/model_files.h"
#include "models/weights.h"

namespace flashps {

FluxTransformer load_flux_transformer(const std::string& model_dir, at::ScalarType dtype) {
  FluxConfig config = FluxConfig::from_json(read_component_config(model_dir), model_dir + "/config.json");
  FluxTransformer model(config);
  auto files = open_component_weights(model_dir);
  std::vector<const SafetensorsFile*> views;
  for (const auto& file : files) views.push_back(file.get());
  WeightLoadOptions options;
  options.dtype = dtype;
  load_weights_strict(*model, views, options);
  prefer_fast_linear_layout(*model);
  model->eval();
  return model;
}

}  // namespace flashps
