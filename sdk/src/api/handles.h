// What the C API's opaque handles hold, for the API sources that share them (editor_api.cpp,
// store_api.cpp, engine_api.cpp). Internal (not installed).
#pragma once
#include <memory>
#include <mutex>
#include <string>

#include "flashps/flashps.h"

namespace flashps {
class InpaintModel;
class InpaintPipeline;
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

// A loaded model (flashps/model.h): one reference to its weights, and the strings its info points to.
struct flashps_model {
  std::shared_ptr<flashps::InpaintModel> model;
  std::string device;
  flashps_model_info info{};
};

// An editor (flashps/editor.h): a pipeline over a shared model. Every call on an editor locks
// `mutex`, so an editor shared by threads runs one call at a time (the pipelines are not
// re-entrant); `info` is set once at open and read without it.
struct flashps_editor {
  std::mutex mutex;
  std::shared_ptr<flashps::InpaintModel> model;
  std::unique_ptr<flashps::InpaintPipeline> pipeline;
  std::string device;
  flashps_model_info info{};
  ~flashps_editor();  // editor_api.cpp, where the pipeline is a complete type
};

namespace flashps::api {

// flashps_model_info of `model`; its strings point into `model` and `device`, which must outlive it.
flashps_model_info describe_model(const InpaintModel& model, const std::string& device);

// Where an editor or engine keeps template captures: `store` when given (shared), else a new
// ActivationStore in `capture_dir`, else nullptr (the pipelines then keep them in memory).
std::shared_ptr<engine::CaptureStore> capture_store_for(flashps_store* store, const char* capture_dir);

}  // namespace flashps::api
