#include "pipeline/edit_rules.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/diagnostics/error.h"

namespace flashps::rules {
namespace {

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

void require(bool ok, const FieldName& name, const std::string& field, const std::string& value,
             const std::string& allowed) {
  if (!ok) throw InvalidArgumentError((name ? name(field) : field) + " is " + value + "; it must be " + allowed);
}

void require_range(int64_t value, int64_t low, int64_t high, const FieldName& name, const std::string& field,
                   const std::string& allowed) {
  require(value >= low && value <= high, name, field, std::to_string(value), allowed);
}

void require_strength(double strength, const FieldName& name) {
  require(strength > 0 && strength <= 1, name, "strength", number_text(strength), "in (0, 1]");
}

}  // namespace

void check_edit_settings(const EditSettings& settings, const FieldName& name) {
  require_range(settings.steps, 0, kMaxSteps, name, "steps",
                "0 (the model's recommendation) to " + std::to_string(kMaxSteps));
  require_strength(settings.strength, name);
  require(std::isfinite(settings.guidance_scale) && settings.guidance_scale <= kMaxGuidanceScale, name,
          "guidance_scale", number_text(settings.guidance_scale),
          "0 to " + number_text(kMaxGuidanceScale) + " (< 0: the model's default)");
  const std::string reach = "0 to " + std::to_string(kMaxMaskPixels);
  require_range(settings.mask_grow_pixels, 0, kMaxMaskPixels, name, "mask_grow_pixels", reach);
  require_range(settings.mask_feather_pixels, 0, kMaxMaskPixels, name, "mask_feather_pixels", reach);
  require_range(settings.token_dilation, 0, kMaxTokenDilation, name, "token_dilation",
                "0 to " + std::to_string(kMaxTokenDilation));
  require(settings.context_size <= kMaxContextSize, name, "context_size", std::to_string(settings.context_size),
          "< 0 (the whole image), 0 (the model's native size) or 1 to " + std::to_string(kMaxContextSize));
  require_range(settings.max_sequence_length, 0, kMaxSequenceLength, name, "max_sequence_length",
                "0 (the model's default) to " + std::to_string(kMaxSequenceLength));
  require_range(settings.texture_transfer, -1, 1, name, "texture_transfer",
                "-1 (the model's choice), 0 (off) or 1 (on)");
}

void check_resolved_steps(int steps, double strength) {
  require_range(steps, 1, kMaxSteps, nullptr, "steps", "1 to " + std::to_string(kMaxSteps));
  require_strength(strength, nullptr);
}

void check_mask_reach(int mask_grow_pixels, int mask_feather_pixels, int token_dilation, int width, int height,
                      int grid_width, int grid_height) {
  const std::string image = "this " + std::to_string(width) + "x" + std::to_string(height) + " image";
  const auto within = [](const char* field, int value, int max, const std::string& what) {
    if (value < 0 || value > max)
      throw InvalidArgumentError(std::string(field) + " is " + std::to_string(value) + "; for " + what +
                                 " it must be 0 to " + std::to_string(max));
  };
  within("mask_grow_pixels", mask_grow_pixels, std::max(width, height), image);
  within("mask_feather_pixels", mask_feather_pixels, std::max(width, height), image);
  within("token_dilation", token_dilation, std::max(grid_width, grid_height),
         image + " (" + std::to_string(grid_width) + "x" + std::to_string(grid_height) + " tokens)");
}

}  // namespace flashps::rules
