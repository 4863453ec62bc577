// Writing a model in another key layout: the inverse of a KeyLayout (key_layout.h). A layout says,
// for each model key, where its stored tensor holds it; here each stored tensor is rebuilt from
// the model tensors it holds: row ranges concatenated in order, halves swapped back, a matrix
// given back its 1x1 kernel dimensions, a transposed matrix transposed back. Writers of
// random-weight models produce one stored tensor at a time (a recipe, then its tensor), so a
// 12B-parameter model never has to be in memory at once.
#pragma once
#include <ATen/Tensor.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "models/loading/key_layout.h"

namespace flashps {

// One stored tensor of a layout: the model keys it holds (in row order for row ranges) and how.
struct StoredTensorRecipe {
  std::string stored_key;
  KeyPiece::Transform transform = KeyPiece::Transform::as_stored;
  std::vector<std::string> model_keys;  // one, or several row ranges in order
  std::vector<int64_t> stored_shape;
};

// The recipes of every stored tensor of `layout` over model tensors of `model_shapes`, in stored
// key order. Throws CorruptDataError naming `layout_name` and the key when the layout cannot be
// inverted: a model key without a shape or a shape that disagrees with its rows, row ranges that
// leave gaps or overlap, a stored key used both whole and in pieces, or a model tensor the layout
// does not store (it would be lost).
std::vector<StoredTensorRecipe> stored_tensor_recipes(const KeyLayout& layout,
                                                      const std::map<std::string, std::vector<int64_t>>& model_shapes,
                                                      const std::string& layout_name);

// The stored tensor of `recipe`, from the model tensors `model_tensor` returns (float CPU tensors
// of the recipe's model keys). The result is contiguous.
at::Tensor stored_tensor_from_model(const StoredTensorRecipe& recipe,
                                    const std::function<at::Tensor(const std::string& model_key)>& model_tensor);

// All stored tensors of `layout` from a whole model state (tests, small models).
std::map<std::string, at::Tensor> stored_tensors_from_layout(const KeyLayout& layout,
                                                             const std::map<std::string, at::Tensor>& model,
                                                             const std::string& layout_name);

// Stored entries with shapes only (reading throws): what a layout table needs to build the layout
// of a file that does not exist yet, e.g. flux_bfl_layout over the keys a writer is about to write.
std::unique_ptr<CheckpointTensors> shapes_only_tensors(const std::map<std::string, std::vector<int64_t>>& shapes,
                                                       const std::string& source);

}  // namespace flashps
