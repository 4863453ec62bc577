#include "pipeline/flux/fill_conditioning.h"

#include <ATen/ATen.h>

#include "core/diagnostics/error.h"
#include "pipeline/flux/flux_packing.h"
#include "classical/pyramid_fill.h"

namespace flashps {

MaskedImageFill parse_masked_image_fill(const std::string& name, const std::string& source) {
  if (name == "neutral") return MaskedImageFill::neutral;
  if (name == "pyramid") return MaskedImageFill::pyramid;
  throw Error(source + ": masked image fill must be \"neutral\" or \"pyramid\", got \"" + name + "\"");
}

std::string masked_image_fill_name(MaskedImageFill fill) {
  return fill == MaskedImageFill::pyramid ? "pyramid" : "neutral";
}

at::Tensor fill_conditioning(const ImageAutoencoder& autoencoder, const at::Tensor& image,
                             const at::Tensor& pixel_mask, MaskedImageFill fill) {
  at::Tensor masked_image = fill == MaskedImageFill::pyramid ? pyramid_fill(image, pixel_mask)
                                                             : image * (1 - pixel_mask).unsqueeze(0);
  at::Tensor masked_latents = pack_latents(autoencoder.encode_to_latents(masked_image.unsqueeze(0))[0]);
  return at::cat({masked_latents, pack_fill_mask(pixel_mask, autoencoder.scale_factor())}, 1).to(at::kFloat);
}

}  // namespace flashps
