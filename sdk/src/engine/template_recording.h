// Template registration, replay's mirror (FlashPS §3.2): a full run whose router records the
// activations of every image token (a later edit's mask is not known yet), committed together
// with the template's own mask so edits never replay tokens the template run regenerated.
#pragma once
#include <ATen/Tensor.h>

#include <memory>
#include <optional>

#include "engine/capture.h"
#include "engine/capture_router.h"
#include "engine/token_mask.h"

namespace flashps::engine {

class TemplateRecording {
 public:
  // storage_dtype: what captures are stored in (a bfloat16 model's, half the bytes). Check
  // store.why_unwritable() first: begin() of a read-only store throws.
  TemplateRecording(CaptureStore& store, const CaptureId& id, bool capture_kv, bool capture_hidden,
                    std::optional<at::ScalarType> storage_dtype);
  CaptureRouter& router() { return *router_; }
  // Stores the template's mask with the activations and makes the capture visible atomically.
  std::shared_ptr<const Capture> commit(const TokenMask& template_mask);

 private:
  std::unique_ptr<CaptureWriter> writer_;
  std::unique_ptr<CaptureRouter> router_;
};

}  // namespace flashps::engine
