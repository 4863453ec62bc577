#include "pipeline/edit_number_checks.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "pipeline/edit_types.h"

namespace flashps {
namespace {

void require_at_most(const char* field, int value, int max, const std::string& what) {
  if (value < 0 || value > max)
    throw InvalidArgumentError(std::string(field) + " is " + std::to_string(value) + "; for " + what +
                               " it must be 0 to " + std::to_string(max));
}

}  // namespace

void check_mask_settings(const EditRequest& request, int width, int height, int grid_width, int grid_height) {
  const std::string image = "this " + std::to_string(width) + "x" + std::to_string(height) + " image";
  require_at_most("mask_grow_pixels", request.mask_grow_pixels, std::max(width, height), image);
  require_at_most("mask_feather_pixels", request.mask_feather_pixels, std::max(width, height), image);
  require_at_most("token_dilation", request.token_dilation, std::max(grid_width, grid_height),
                  image + " (" + std::to_string(grid_width) + "x" + std::to_string(grid_height) + " tokens)");
}

}  // namespace flashps
