#include "api/serving_names.h"

#include <string>

#include "api/c_enum.h"
#include "core/diagnostics/error.h"

namespace flashps::api {

const char* batching_name(const flashps_batching& batching) {
  const int value = c_enum_value(batching);
  switch (value) {
    case FLASHPS_BATCHING_CB: return "cb";
    case FLASHPS_BATCHING_NAIVE_CB: return "naive-cb";
    case FLASHPS_BATCHING_STATIC: return "static";
    case FLASHPS_BATCHING_STATIC_FULL: return "static-full";
  }
  throw InvalidArgumentError("flashps_engine_params.batching is " + std::to_string(value) +
                             "; it must be FLASHPS_BATCHING_CB (0), _NAIVE_CB (1), _STATIC (2) or _STATIC_FULL (3)");
}

serve::BalancePolicy to_policy(const flashps_balance_policy& policy) {
  const int value = c_enum_value(policy);
  switch (value) {
    case FLASHPS_BALANCE_MASK_AWARE: return serve::BalancePolicy::mask_aware;
    case FLASHPS_BALANCE_ROUND_ROBIN: return serve::BalancePolicy::round_robin;
    case FLASHPS_BALANCE_REQUEST_COUNT: return serve::BalancePolicy::request_count;
    case FLASHPS_BALANCE_TOKEN_COUNT: return serve::BalancePolicy::token_count;
  }
  throw InvalidArgumentError("flashps_engine_params.policy is " + std::to_string(value) +
                             "; it must be FLASHPS_BALANCE_MASK_AWARE (0), _ROUND_ROBIN (1), _REQUEST_COUNT (2) "
                             "or _TOKEN_COUNT (3)");
}

}  // namespace flashps::api
