#include "pipeline/default_steps.h"

#include "core/error.h"

namespace flashps {

int default_steps_of(const nlohmann::json& index, const std::string& source) {
  if (!index.is_object()) return kDefaultSteps;
  const auto steps = index.find("_flashps_default_steps");
  if (steps == index.end()) return kDefaultSteps;
  if (!steps->is_number_integer() || steps->get<int>() < 1 || steps->get<int>() > 1000)
    throw CorruptDataError(source + ": _flashps_default_steps must be an integer from 1 to 1000");
  return steps->get<int>();
}

}  // namespace flashps
