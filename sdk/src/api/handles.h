// What the C API's opaque handles hold, for the API sources that share them (editor_api.cpp,
// store_api.cpp, engine_api.cpp). Internal (not installed).
#pragma once
#include <memory>
#include <mutex>
#include <string>

#include "flashps/flashps.h"

namespace flashps {
class FluxInpaintPipeline;
class SDInpaintPipeline;
namespace cache {
class ActivationStore;
}
namespace engine {
class CaptureStore;
}
}  // namespace flashps

// An open activation store (flashps/store.h). Editors and engines opened with it share the
// ActivationStore: it lives until the last of them and the handle are closed.
struct flashps_store {
  std::shared_ptr<flashps::cache::ActivationStore> store;
  std::string directory;
  std::string notes;  // what opening it found and did, one per line
};

// A loaded model (flashps/editor.h). Exactly one of `flux` / `sd` is set. Every call on an
// editor locks `mutex`, so an editor shared by threads runs one call at a time (the pipelines
// are not re-entrant); the strings are set once at open and read without it.
struct flashps_editor {
  std::mutex mutex;
  flashps_model_family family = FLASHPS_FAMILY_FLUX;
  std::unique_ptr<flashps::FluxInpaintPipeline> flux;
  std::unique_ptr<flashps::SDInpaintPipeline> sd;
  std::string model_dir, fingerprint, device;
  bool bf16 = false;
  ~flashps_editor();  // editor_api.cpp, where the pipelines are complete types
};

namespace flashps::api {

// Where an editor or engine keeps template captures: `store` when given (shared), else a new
// ActivationStore in `capture_dir`, else nullptr (the pipelines then keep them in memory).
std::shared_ptr<engine::CaptureStore> capture_store_for(flashps_store* store, const char* capture_dir);

}  // namespace flashps::api
