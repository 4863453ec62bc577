// Denoising steps of a request that names none, read the same way for every family: a model
// folder's model_index.json may carry "_flashps_default_steps" (a model distilled or trained for
// few steps); otherwise 28.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace flashps {

inline constexpr int kDefaultSteps = 28;

// `index`: the folder's parsed model_index.json (null when it has none); `source` names it in the
// CorruptDataError a value outside 1..1000 gets.
int default_steps_of(const nlohmann::json& index, const std::string& source);

}  // namespace flashps
