#include "engine/template_mask.h"

#include <ATen/ATen.h>

#include "core/diagnostics/error.h"

namespace flashps::engine {
namespace {
const EntryKey kTemplateMaskKey{0, kTemplateMaskBlock, Slot::output};
}

void put_template_mask(CaptureWriter& writer, const TokenMask& mask) {
  if (mask.empty()) return;
  writer.put(kTemplateMaskKey, mask.masked.to(at::kFloat).view({-1, 1}));
}

TokenMask template_mask(const Capture& capture, int64_t grid_height, int64_t grid_width) {
  const int64_t tokens = grid_height * grid_width;
  if (!capture.contains(kTemplateMaskKey)) return token_mask_from_grid(at::zeros({grid_height, grid_width}, at::kBool));
  const at::Tensor stored = capture.read_rows(kTemplateMaskKey, at::arange(tokens, at::kLong));
  if (stored.size(0) != tokens)
    throw Error("template capture: its mask has " + std::to_string(stored.size(0)) + " tokens, the edit " +
                std::to_string(tokens));
  return token_mask_from_grid(stored.to(at::kFloat).view({grid_height, grid_width}) > 0.5);
}

TokenMask replay_compute_mask(const Capture& capture, const TokenMask& edit_mask) {
  return unite_token_masks(edit_mask, template_mask(capture, edit_mask.grid_height, edit_mask.grid_width));
}

std::optional<TokenMask> replay_compute_mask_noted(const Capture& capture, const TokenMask& edit_mask,
                                                   const std::string& unit, std::vector<std::string>& notes) {
  TokenMask compute;
  try {
    compute = replay_compute_mask(capture, edit_mask);
  } catch (const std::exception& error) {
    notes.push_back(std::string("template capture unreadable (") + error.what() + "): computed in full");
    return std::nullopt;
  }
  const int64_t added = compute.masked_count() - edit_mask.masked_count();
  if (added == 0) return compute;
  notes.push_back("the template was captured with a mask: its " + std::to_string(added) + " " + unit +
                  " outside this edit's mask are computed too");
  if (compute.full()) {
    notes.push_back("no " + unit + " left to replay: computed in full");
    return std::nullopt;
  }
  return compute;
}

}  // namespace flashps::engine
