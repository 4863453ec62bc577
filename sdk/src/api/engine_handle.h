// The C API's serving handles (flashps/engine.h): what engine_api.cpp and batch_api.cpp share.
// Internal (not installed).
#pragma once
#include <memory>
#include <mutex>
#include <string>

#include "flashps/engine.h"
#include "serve/engine.h"

namespace flashps {
class InpaintModel;
class InpaintPipeline;
namespace engine {
class CaptureStore;
}
}  // namespace flashps

struct flashps_engine {
  std::shared_ptr<flashps::engine::CaptureStore> store;  // shared by every device's pipeline
  std::shared_ptr<flashps::InpaintModel> model;  // the first device's weights
  // The first device's pipeline: registrations run on it.
  std::shared_ptr<flashps::InpaintPipeline> first_pipeline;
  std::unique_ptr<flashps::serve::Engine> engine;
  int workers = 0;
  std::string devices;      // flashps_model_info.device points into it
  flashps_model_info info{};
  // Registrations pause the engine; pause/resume do not nest, so one registration at a time.
  std::mutex registering;
};

struct flashps_request {
  flashps::serve::EditHandle handle;
  // flashps_edit_stats.notes of the result: joined once, then unchanged until the handle is freed
  // (several threads may read the result).
  std::once_flag notes_joined;
  std::string notes;
};
