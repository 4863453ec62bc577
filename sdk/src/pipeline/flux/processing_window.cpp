#include "pipeline/flux/processing_window.h"

#include <algorithm>

namespace flashps {

ProcessingWindow processing_window(int width, int height, const PixelBox& mask_box, int context, bool whole_image) {
  ProcessingWindow window;
  window.width = window.target_width = width;
  window.height = window.target_height = height;
  if (context <= 0 || (width <= context && height <= context)) return window;
  if (whole_image || mask_box.empty()) {
    const double scale = double(context) / std::max(width, height);
    window.target_width = std::max(1, static_cast<int>(width * scale + 0.5));
    window.target_height = std::max(1, static_cast<int>(height * scale + 0.5));
    window.scaled_whole = true;
    return window;
  }
  const int side = std::max(context, static_cast<int>(std::max(mask_box.w, mask_box.h) * 1.5));
  window.width = std::min(side, width);
  window.height = std::min(side, height);
  const int centre_x = mask_box.x + mask_box.w / 2, centre_y = mask_box.y + mask_box.h / 2;
  window.x = std::clamp(centre_x - window.width / 2, 0, width - window.width);
  window.y = std::clamp(centre_y - window.height / 2, 0, height - window.height);
  window.windowed = true;
  const double scale = std::min(1.0, double(context) / std::max(window.width, window.height));
  window.target_width = static_cast<int>(window.width * scale + 0.5);
  window.target_height = static_cast<int>(window.height * scale + 0.5);
  return window;
}

}  // namespace flashps
