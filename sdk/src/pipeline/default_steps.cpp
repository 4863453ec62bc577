#include "pipeline/default_steps.h"

#include "core/diagnostics/error.h"
#include "pipeline/edit_rules.h"

namespace flashps {

int default_steps_of(const nlohmann::json& index, const std::string& source) {
  if (!index.is_object()) return kDefaultSteps;
  const auto steps = index.find("_flashps_default_steps");
  if (steps == index.end()) return kDefaultSteps;
  if (!steps->is_number_integer() || steps->get<int>() < 1 || steps->get<int>() > rules::kMaxSteps)
    throw CorruptDataError(source + ": _flashps_default_steps must be an integer from 1 to " +
                           std::to_string(rules::kMaxSteps));
  return steps->get<int>();
}

}  // namespace flashps
