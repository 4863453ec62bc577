// flashps_batching and flashps_balance_policy as the serving engine knows them: its names
// (serve/batching.h and serve/load_balancer.h parse those) and its policies. One table for the
// engine's params (engine_api.cpp) and the public name functions (names_api.cpp). Internal.
#pragma once
#include "flashps/engine.h"
#include "serve/load_balancer.h"

namespace flashps::api {

// "cb", "naive-cb", "static", "static-full"; InvalidArgumentError naming
// flashps_engine_params.batching for a value outside the enum.
const char* batching_name(const flashps_batching& batching);  // read as an int (c_enum.h)
// InvalidArgumentError naming flashps_engine_params.policy for a value outside the enum.
serve::BalancePolicy to_policy(const flashps_balance_policy& policy);

}  // namespace flashps::api
