// What one block of a forward costs in seconds, on each of the two streams: the cost model
// estimates it (engine/cost_model.h) and the planner chooses from it (engine/planner.h). Its own
// header so that a model's block description compiles without the planner.
#pragma once

namespace flashps::engine {

struct BlockTimes {
  double compute_with_cache = 0;     // C_w^m: compute only the masked tokens
  double compute_without_cache = 0;  // C_w/o: compute all tokens
  double load = 0;                   // L^m: load the block's cached rows
};

}  // namespace flashps::engine
