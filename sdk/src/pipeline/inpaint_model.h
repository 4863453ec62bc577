// What every model family provides, seen from outside the family: a loaded model (weights, loaded
// once and shared) and the pipelines over it (contexts: a store, a planner speed, jobs in flight).
// llama.cpp splits model weights from contexts the same way: an editor and a serving engine over
// one model hold its weights once.
//
// A family implements these two classes in its own files and adds one line to the registry
// (pipeline/family_registry.cpp). The C API, serving, the profiler and the benchmarks see only
// these interfaces.
#pragma once
#include <ATen/Device.h>
#include <c10/core/ScalarType.h>

#include <memory>
#include <string>

#include "engine/capture.h"
#include "pipeline/edit_job.h"
#include "pipeline/edit_types.h"

namespace flashps {

struct FamilyEntry;

// What a loaded model can do; the front ends show it (flashps_model_info) and the request rules
// check against it.
struct ModelCapabilities {
  bool takes_text = false;        // encodes text prompts (else prompts are ignored, with a note)
  bool guidance = false;          // honours guidance_scale
  bool kv_replay = false;         // mask-aware kinds it replays: keys/values,
  bool hidden_replay = false;     // and block outputs
  std::string why_no_kv;          // when !kv_replay: why, for the error that refuses it
  int size_multiple = 1;          // processing sizes are multiples of this many pixels
  int native_size = 0;            // pixels per side it was trained at; 0 = any
  int default_steps = 28;         // denoising steps of a request that names none
  bool is_fill = false;           // Fill conditioning / 9-channel inpainting model
  bool unconditional = false;     // trained without prompts
  bool recommends_texture_transfer = false;
};

// A pipeline over a loaded model: one context. Not re-entrant (one thread steps it at a time;
// pipeline/edit_job.h says which calls may run beside a step).
class InpaintPipeline : public StepwisePipeline {
 public:
  EditResult edit(const EditRequest& request) { return run_alone(request); }
  // Runs the template in full and captures what later edits of it replay: keys/values and/or
  // block outputs, as far as the family replays them (UnsupportedError when it replays neither).
  virtual TemplateInfo register_template(const EditRequest& request, bool capture_kv, bool capture_hidden) = 0;
  // Whether edit(request) would replay a registered template (image processing only, no model).
  virtual bool has_template(const EditRequest& request) const = 0;
  virtual engine::CaptureStore& store() = 0;
  virtual at::Device device() const = 0;
  virtual const std::string& fingerprint() const = 0;  // the model's part of capture ids
};

// What is given beside a single-file model (--vae, --text-encoder, --text-encoder-2,
// --model-type, --tokenizers); all empty for a diffusers folder.
struct ModelFiles {
  std::string vae, text_encoder, text_encoder_2;  // component files (or diffusers component folders)
  std::string model_type;      // pipeline/model_type.h's names; "" = recognised from the file
  std::string tokenizers_dir;  // a diffusers folder holding tokenizer/ (and tokenizer_2/)
  bool empty() const {
    return vae.empty() && text_encoder.empty() && text_encoder_2.empty() && model_type.empty() &&
           tokenizers_dir.empty();
  }
};

struct ModelLoadOptions {
  at::ScalarType dtype = at::kFloat;
  at::Device device = at::Device(at::kCPU);
  ModelFiles files;
};

// A model's weights on one device, loaded once. Thread-safe: pipelines made from it on different
// threads run at the same time (their forward passes only read the weights).
class InpaintModel {
 public:
  virtual ~InpaintModel() = default;
  virtual const FamilyEntry& family() const = 0;
  virtual ModelCapabilities capabilities() const = 0;
  virtual const std::string& model_dir() const = 0;  // the folder or file loaded
  // The files given beside it, so another device loads the same model (empty for a folder).
  virtual const ModelFiles& files() const {
    static const ModelFiles none;
    return none;
  }
  virtual const std::string& fingerprint() const = 0;  // hash of configs and weight headers
  virtual at::Device device() const = 0;
  virtual at::ScalarType dtype() const = 0;
  // A new context over these weights; `store` keeps its template captures (null: in memory).
  virtual std::unique_ptr<InpaintPipeline> new_pipeline(std::shared_ptr<engine::CaptureStore> store) const = 0;
};

// The request rules that depend on what the model can do (the cache mode it replays), checked
// before any work: UnsupportedError naming the model folder otherwise.
void check_request_for(const InpaintModel& model, const EditRequest& request);

}  // namespace flashps
