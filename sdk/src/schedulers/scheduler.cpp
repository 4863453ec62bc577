#include "schedulers/scheduler.h"

#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "schedulers/discrete_schedulers.h"
#include "schedulers/flow_match_euler_discrete.h"

namespace flashps {

std::unique_ptr<Scheduler> make_scheduler(const nlohmann::json& config,
                                          const std::string& source_name) {
  auto found = config.is_object() ? config.find("_class_name") : config.end();
  if (!config.is_object() || found == config.end() || !found->is_string())
    throw Error(source_name + ": missing required key '_class_name' (the scheduler class)");
  const std::string class_name = found->get<std::string>();
  if (class_name == "FlowMatchEulerDiscreteScheduler")
    return std::make_unique<FlowMatchEulerDiscreteScheduler>(
        parse_flow_match_config(config, source_name));
  if (auto scheduler = make_discrete_scheduler(class_name, config, source_name)) return scheduler;
  throw Error(source_name + ": scheduler '" + class_name +
              "' is not supported yet (supported: FlowMatchEulerDiscreteScheduler, DDIMScheduler, "
              "EulerDiscreteScheduler, DPMSolverMultistepScheduler, PNDMScheduler)");
}

std::unique_ptr<Scheduler> load_scheduler(const std::string& scheduler_config_json_path) {
  return make_scheduler(read_json_file(scheduler_config_json_path), scheduler_config_json_path);
}

}  // namespace flashps
