#include "serving_engine.h"

#include <iostream>

#include "terminal_progress.h"

namespace flashps::cli {

ServingEngine open_serving_engine(const ServingEngineOptions& options) {
  sdk::EngineOptions engine_options;
  engine_options.devices = options.devices;
  engine_options.bf16 = options.dtype == "bf16";
  sdk::StoreOptions store_options;
  store_options.directory = options.cache_dir;  // empty: the SDK's default store
  engine_options.store = sdk::Store::open(store_options);
  for (const std::string& note : engine_options.store.notes()) std::cerr << "flashps: note: " << note << "\n";
  engine_options.batching = sdk::batching_from_name(options.batching);
  engine_options.max_batch = options.max_batch;
  engine_options.max_queued = options.max_queued;
  engine_options.profile_path = options.profile;
  engine_options.compute_nice = options.compute_nice;
  engine_options.progress = terminal_progress(options.quiet);
  ServingEngine opened;
  opened.store = engine_options.store;
  if (!options.model.has_component_options()) {
    opened.engine = sdk::Engine::open(options.model.model, engine_options);
    return opened;
  }
  // The first device's weights; the engine loads the same files on the others.
  sdk::ModelOptions model = model_open_options(options.model);
  model.bf16 = engine_options.bf16;
  model.device = options.devices.substr(0, options.devices.find(','));
  model.progress = engine_options.progress;
  opened.engine = sdk::Engine::open(sdk::Model::open(options.model.model, model), engine_options);
  return opened;
}

}  // namespace flashps::cli
