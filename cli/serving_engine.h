// The serving engine as `flashps batch` and `flashps serve` open it, from the options both take.
#pragma once
#include <flashps/flashps.hpp>

#include <cstddef>
#include <string>

#include "model_options.h"

namespace flashps::cli {

struct ServingEngineOptions {
  ModelPathOptions model;         // --model (empty: the bundled model) and the files beside it
  std::string devices = "cpu", dtype = "fp32", cache_dir, batching = "cb", profile;
  int max_batch = 0;  // per device
  size_t max_queued = 64;
  bool quiet = false;             // no loading bar
  int compute_nice = 0;           // added to the compute threads' nice value (serve: 10)
};

struct ServingEngine {
  sdk::Store store;  // the activation store the engine shares (serve lists it)
  sdk::Engine engine;
};

// Opens the store (its recovery notes go to stderr) and loads the model on every device.
ServingEngine open_serving_engine(const ServingEngineOptions& options);

}  // namespace flashps::cli
