// Post-processing shared by every family: the decoded window back into the template. Resized to
// the window, pasted into the original, optionally given the surroundings' fine detail, then
// composited through the grown/feathered mask so unmasked pixels come back unchanged.
#pragma once
#include <cstdint>

#include "core/image/image.h"
#include "pipeline/edit_types.h"
#include "pipeline/prepared_image.h"

namespace flashps {

struct PasteBackOptions {
  bool texture_transfer = false;  // classical/texture_transfer.h
  int64_t token_pixels = 1;       // pixels per model token: texture transfer's patch scale
};

// `generated`: the decoded processing-size image. The input's transparency is kept (opaque where
// regenerated).
Image paste_back(Image generated, const PreparedImage& prepared, const EditRequest& request,
                 const PasteBackOptions& options);

}  // namespace flashps
