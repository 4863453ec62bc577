#include "pipeline/paste_back.h"

#include "core/mask/mask_ops.h"
#include "classical/texture_transfer.h"

namespace flashps {

Image paste_back(Image generated, const PreparedImage& prepared, const EditRequest& request,
                 const PasteBackOptions& options) {
  if (prepared.resized) generated = resize_bilinear(generated, prepared.window_width, prepared.window_height);
  if (prepared.windowed) {
    Image whole = prepared.original;
    paste(whole, generated, prepared.window_x, prepared.window_y);
    generated = std::move(whole);
  }
  if (options.texture_transfer) {
    // At the output size: a window scaled up from the model's size needs its detail most.
    const double scale = prepared.resized ? static_cast<double>(prepared.window_width) / prepared.width : 1.0;
    generated = transfer_texture(generated, prepared.original, prepared.mask.original,
                                 texture_transfer_options(options.token_pixels, scale));
  }
  Image alpha = prepared.mask.original;
  if (request.mask_grow_pixels > 0) alpha = grow_mask(alpha, request.mask_grow_pixels);
  if (request.mask_feather_pixels > 0) alpha = feather_mask(alpha, request.mask_feather_pixels);
  // prepared.original is RGB; restore_alpha brings back the input's alpha.
  return restore_alpha(composite(prepared.original, generated, alpha), request.image, alpha);
}

}  // namespace flashps
