// The C API's serving handles (flashps/engine.h): what engine_api.cpp and batch_api.cpp share.
// Internal (not installed).
#pragma once
#include <memory>
#include <mutex>
#include <string>

#include "flashps/engine.h"
#include "serve/engine.h"

namespace flashps {
class FluxInpaintPipeline;
class SDInpaintPipeline;
namespace engine {
class CaptureStore;
}
}  // namespace flashps

struct flashps_engine {
  std::shared_ptr<flashps::engine::CaptureStore> store;  // shared by every device's pipeline
  // The first device's pipeline, typed (one of them is set): registrations run on it.
  std::shared_ptr<flashps::FluxInpaintPipeline> flux;
  std::shared_ptr<flashps::SDInpaintPipeline> sd;
  std::unique_ptr<flashps::serve::Engine> engine;
  bool takes_text = false;  // the model encodes prompts (Stable Diffusion, Flux with text encoders)
  int workers = 0;
  // flashps_model_info's strings point into these.
  std::string model_dir, fingerprint, devices;
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
