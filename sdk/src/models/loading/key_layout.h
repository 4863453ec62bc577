// Another key layout seen in the model's keys: one table per layout (Black Forest Labs' Flux keys,
// the original Stable Diffusion keys, ...) says, for each model key, which stored tensor holds it
// and how: as stored, a range of its rows (q, k and v stored as one matrix), its two halves
// swapped (shift/scale stored in the other order), a 1x1 convolution's kernel as a matrix, or a
// matrix stored transposed (OpenCLIP's text_projection).
#pragma once
#include <map>
#include <memory>
#include <set>
#include <string>

#include "models/loading/checkpoint_tensors.h"

namespace flashps {

struct KeyPiece {
  enum class Transform { as_stored, rows, swap_halves, squeeze_1x1, transpose };
  std::string stored_key;
  Transform transform = Transform::as_stored;
  int64_t row_begin = 0, row_end = 0;  // rows: [row_begin, row_end) of dimension 0
};

// model key -> where it comes from; stored keys no model key uses are reported as unexpected.
using KeyLayout = std::map<std::string, KeyPiece>;

// `stored` seen through `layout` (which must only name stored keys; checked here, naming the
// layout and the key). Stored keys in `dropped` are left out (buffers and tensors the model does
// not use, such as CLIP's position_ids); every other stored key the layout does not use stays
// visible under its own name, so the strict loader names it. The result owns `stored`.
std::unique_ptr<CheckpointTensors> tensors_in_layout(std::unique_ptr<CheckpointTensors> stored,
                                                     KeyLayout layout, const std::string& layout_name,
                                                     const std::set<std::string>& dropped = {});

}  // namespace flashps
