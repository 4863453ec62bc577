#include "engine/template_recording.h"

#include "engine/template_mask.h"

namespace flashps::engine {

TemplateRecording::TemplateRecording(CaptureStore& store, const CaptureId& id, bool capture_kv,
                                     bool capture_hidden, std::optional<at::ScalarType> storage_dtype)
    : writer_(store.begin(id)),
      router_(std::make_unique<CaptureRouter>(*writer_, capture_kv, capture_hidden, storage_dtype)) {}

std::shared_ptr<const Capture> TemplateRecording::commit(const TokenMask& template_mask) {
  put_template_mask(*writer_, template_mask);
  return writer_->commit();
}

}  // namespace flashps::engine
