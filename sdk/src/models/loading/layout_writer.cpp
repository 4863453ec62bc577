#include "models/loading/layout_writer.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <set>

#include "core/diagnostics/error.h"

namespace flashps {
namespace {

using Transform = KeyPiece::Transform;

std::string layout_shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// The stored shape of a single (non-row) piece from its model tensor's shape.
std::vector<int64_t> whole_stored_shape(Transform transform, std::vector<int64_t> shape, const std::string& where) {
  switch (transform) {
    case Transform::as_stored: return shape;
    case Transform::swap_halves:
      if (shape.empty() || shape[0] % 2 != 0) throw CorruptDataError(where + ": odd rows cannot be swapped in halves");
      return shape;
    case Transform::squeeze_1x1:
      if (shape.size() != 2) throw CorruptDataError(where + ": a 1x1 kernel's matrix must be 2-D, not " + layout_shape_text(shape));
      shape.insert(shape.end(), {1, 1});
      return shape;
    case Transform::rows: break;
    case Transform::transpose:
      if (shape.size() != 2) throw CorruptDataError(where + ": a transposed matrix must be 2-D, not " + layout_shape_text(shape));
      return {shape[1], shape[0]};
  }
  throw CorruptDataError(where + ": row ranges are not a whole tensor");
}

class ShapesOnlyTensors : public CheckpointTensors {
 public:
  ShapesOnlyTensors(const std::map<std::string, std::vector<int64_t>>& shapes, std::string source)
      : source_(std::move(source)) {
    for (const auto& [key, shape] : shapes) entries_[key] = CheckpointEntry{shape, "F32", true, source_};
  }
  const std::string& source() const override { return source_; }
  const std::map<std::string, CheckpointEntry>& entries() const override { return entries_; }
  at::Tensor read(const std::string& key) const override {
    throw UnsupportedError(source_ + ": '" + key + "' has a shape but no values (a layout being planned)");
  }
  void release(const std::string&) const override {}

 private:
  std::string source_;
  std::map<std::string, CheckpointEntry> entries_;
};

}  // namespace

std::vector<StoredTensorRecipe> stored_tensor_recipes(const KeyLayout& layout,
                                                      const std::map<std::string, std::vector<int64_t>>& model_shapes,
                                                      const std::string& layout_name) {
  std::map<std::string, std::vector<std::pair<std::string, KeyPiece>>> by_stored;
  for (const auto& [model_key, piece] : layout) {
    if (!model_shapes.count(model_key))
      throw CorruptDataError(layout_name + " layout: it stores " + model_key + ", which the model does not have");
    by_stored[piece.stored_key].emplace_back(model_key, piece);
  }
  for (const auto& [model_key, shape] : model_shapes) {
    if (!layout.count(model_key))
      throw CorruptDataError(layout_name + " layout: the model's " + model_key + " " + layout_shape_text(shape) +
                             " has no place in it (it would be lost)");
  }
  std::vector<StoredTensorRecipe> recipes;
  for (auto& [stored_key, pieces] : by_stored) {
    const std::string where = layout_name + " layout, " + stored_key;
    StoredTensorRecipe recipe;
    recipe.stored_key = stored_key;
    const bool in_rows = pieces.front().second.transform == Transform::rows;
    if (!in_rows) {
      if (pieces.size() != 1)
        throw CorruptDataError(where + ": stored whole for both " + pieces[0].first + " and " + pieces[1].first);
      recipe.transform = pieces.front().second.transform;
      recipe.model_keys = {pieces.front().first};
      recipe.stored_shape = whole_stored_shape(recipe.transform, model_shapes.at(pieces.front().first), where);
      recipes.push_back(std::move(recipe));
      continue;
    }
    std::sort(pieces.begin(), pieces.end(),
              [](const auto& a, const auto& b) { return a.second.row_begin < b.second.row_begin; });
    int64_t next_row = 0;
    std::vector<int64_t> rest;
    for (const auto& [model_key, piece] : pieces) {
      if (piece.transform != Transform::rows)
        throw CorruptDataError(where + ": " + model_key + " is stored whole in a tensor split in rows");
      const std::vector<int64_t>& shape = model_shapes.at(model_key);
      if (piece.row_begin != next_row)
        throw CorruptDataError(where + ": rows [" + std::to_string(next_row) + ", " + std::to_string(piece.row_begin) +
                               ") hold no model tensor (or two overlap) before " + model_key);
      if (shape.empty() || shape[0] != piece.row_end - piece.row_begin)
        throw CorruptDataError(where + ": " + model_key + " " + layout_shape_text(shape) + " does not fill its rows [" +
                               std::to_string(piece.row_begin) + ", " + std::to_string(piece.row_end) + ")");
      const std::vector<int64_t> inner(shape.begin() + 1, shape.end());
      if (model_key != pieces.front().first && inner != rest)
        throw CorruptDataError(where + ": " + model_key + " " + layout_shape_text(shape) + " has other columns than " +
                               pieces.front().first);
      rest = inner;
      next_row = piece.row_end;
      recipe.model_keys.push_back(model_key);
    }
    recipe.transform = Transform::rows;
    recipe.stored_shape = {next_row};
    recipe.stored_shape.insert(recipe.stored_shape.end(), rest.begin(), rest.end());
    recipes.push_back(std::move(recipe));
  }
  return recipes;
}

at::Tensor stored_tensor_from_model(const StoredTensorRecipe& recipe,
                                    const std::function<at::Tensor(const std::string& model_key)>& model_tensor) {
  if (recipe.transform == Transform::rows) {
    std::vector<at::Tensor> parts;
    for (const std::string& key : recipe.model_keys) parts.push_back(model_tensor(key));
    return at::cat(parts, 0).contiguous();
  }
  const at::Tensor model = model_tensor(recipe.model_keys.front());
  switch (recipe.transform) {
    case Transform::as_stored: return model.contiguous();
    case Transform::swap_halves: {  // its own inverse
      const int64_t half = model.size(0) / 2;
      return at::cat({model.narrow(0, half, half), model.narrow(0, 0, half)}, 0);
    }
    case Transform::squeeze_1x1: return model.reshape(recipe.stored_shape).contiguous();
    case Transform::transpose: return model.t().contiguous();
    case Transform::rows: break;
  }
  return model;
}

std::map<std::string, at::Tensor> stored_tensors_from_layout(const KeyLayout& layout,
                                                             const std::map<std::string, at::Tensor>& model,
                                                             const std::string& layout_name) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& [key, tensor] : model) shapes[key] = tensor.sizes().vec();
  std::map<std::string, at::Tensor> stored;
  for (const StoredTensorRecipe& recipe : stored_tensor_recipes(layout, shapes, layout_name))
    stored[recipe.stored_key] = stored_tensor_from_model(recipe, [&model](const std::string& key) { return model.at(key); });
  return stored;
}

std::unique_ptr<CheckpointTensors> shapes_only_tensors(const std::map<std::string, std::vector<int64_t>>& shapes,
                                                       const std::string& source) {
  return std::make_unique<ShapesOnlyTensors>(shapes, source);
}

}  // namespace flashps
