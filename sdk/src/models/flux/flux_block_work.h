// A Flux transformer's blocks as the mask-aware engine's cost model sees them.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/cost_model.h"
#include "models/flux/flux_config.h"

namespace flashps {

// Per-block work of a Flux model (double and single blocks both cost 12*dim^2 multiply-adds per
// computed token: 10 for queries, output and MLP, 2 for keys and values).
std::vector<engine::BlockWork> flux_block_work(const FluxConfig& config, int64_t bytes_per_value);

}  // namespace flashps
