// Classical inpainting baselines for the quality benchmark: the mean colour of the kept pixels,
// the pyramid (push-pull) fill, and Telea's fast marching method (OpenCV's cv::inpaint, when
// built with OpenCV).
#pragma once
#include "core/image/image.h"

namespace flashps::bench {

// RGB image, gray mask of the same size (>= 128 = fill). Masked pixels become the mean colour
// of the unmasked ones.
Image mean_colour_fill(const Image& image, const Image& mask);

// classical/pyramid_fill.h on 8-bit images.
Image pyramid_inpaint(const Image& image, const Image& mask);

bool telea_available();
// Telea (2004) inpainting with the given neighbourhood radius; throws Error without OpenCV.
Image telea_inpaint(const Image& image, const Image& mask, double radius = 5.0);

}  // namespace flashps::bench
