#include "models/loading/key_layout.h"

#include <ATen/ATen.h>

#include <set>

#include "core/diagnostics/error.h"

namespace flashps {
namespace {

std::string describe(const KeyPiece& piece) {
  switch (piece.transform) {
    case KeyPiece::Transform::as_stored: return piece.stored_key;
    case KeyPiece::Transform::rows:
      return piece.stored_key + " rows [" + std::to_string(piece.row_begin) + ", " + std::to_string(piece.row_end) + ")";
    case KeyPiece::Transform::swap_halves: return piece.stored_key + " with its halves swapped";
    case KeyPiece::Transform::squeeze_1x1: return piece.stored_key + " (1x1 kernel as a matrix)";
    case KeyPiece::Transform::transpose: return piece.stored_key + " transposed";
  }
  return piece.stored_key;
}

class LayoutTensors : public CheckpointTensors {
 public:
  LayoutTensors(std::unique_ptr<CheckpointTensors> stored, KeyLayout layout, const std::string& layout_name,
                const std::set<std::string>& dropped)
      : stored_(std::move(stored)), layout_(std::move(layout)) {
    source_ = stored_->source() + " (" + layout_name + " keys)";
    std::set<std::string> used;
    for (const auto& [key, piece] : layout_) {
      const auto found = stored_->entries().find(piece.stored_key);
      if (found == stored_->entries().end())
        throw Error(source_ + ": the layout maps " + key + " to " + piece.stored_key + ", which is not stored");
      used.insert(piece.stored_key);
      CheckpointEntry entry = found->second;
      entry.origin += ": " + describe(piece);
      if (piece.transform == KeyPiece::Transform::rows) {
        if (entry.shape.empty() || piece.row_begin < 0 || piece.row_end > entry.shape[0] || piece.row_begin >= piece.row_end)
          throw CorruptDataError(entry.origin + ": the rows are outside the stored tensor's " +
                                 std::to_string(entry.shape.empty() ? 0 : entry.shape[0]));
        entry.shape[0] = piece.row_end - piece.row_begin;
      } else if (piece.transform == KeyPiece::Transform::swap_halves) {
        if (entry.shape.empty() || entry.shape[0] % 2 != 0)
          throw CorruptDataError(entry.origin + ": an odd number of rows cannot be swapped in halves");
      } else if (piece.transform == KeyPiece::Transform::squeeze_1x1) {
        if (entry.shape.size() != 4 || entry.shape[2] != 1 || entry.shape[3] != 1)
          throw CorruptDataError(entry.origin + ": not a 1x1 convolution kernel");
        entry.shape.resize(2);
      } else if (piece.transform == KeyPiece::Transform::transpose) {
        if (entry.shape.size() != 2) throw CorruptDataError(entry.origin + ": not a matrix");
        std::swap(entry.shape[0], entry.shape[1]);
      }
      entries_[key] = entry;
    }
    // Stored tensors the layout does not use stay visible under their own names, so the strict
    // loader reports them as unexpected keys.
    for (const auto& [stored_key, entry] : stored_->entries()) {
      if (!used.count(stored_key) && !layout_.count(stored_key) && !dropped.count(stored_key)) {
        entries_[stored_key] = entry;
        layout_[stored_key] = KeyPiece{stored_key};
      }
    }
  }
  const std::string& source() const override { return source_; }
  const std::map<std::string, CheckpointEntry>& entries() const override { return entries_; }
  at::Tensor read(const std::string& key) const override {
    const KeyPiece& piece = locate(key);
    const at::Tensor stored = stored_->read(piece.stored_key);
    switch (piece.transform) {
      case KeyPiece::Transform::as_stored: return stored;
      case KeyPiece::Transform::rows: return stored.narrow(0, piece.row_begin, piece.row_end - piece.row_begin);
      case KeyPiece::Transform::swap_halves: {
        const int64_t half = stored.size(0) / 2;
        return at::cat({stored.narrow(0, half, half), stored.narrow(0, 0, half)}, 0);
      }
      case KeyPiece::Transform::squeeze_1x1: return stored.reshape({stored.size(0), stored.size(1)});
      case KeyPiece::Transform::transpose: return stored.t().contiguous();
    }
    return stored;
  }
  void release(const std::string& key) const override { stored_->release(locate(key).stored_key); }

 private:
  const KeyPiece& locate(const std::string& key) const {
    const auto found = layout_.find(key);
    if (found == layout_.end()) throw NotFoundError(source_ + ": no tensor '" + key + "'");
    return found->second;
  }
  std::unique_ptr<CheckpointTensors> stored_;
  KeyLayout layout_;
  std::string source_;
  std::map<std::string, CheckpointEntry> entries_;
};

}  // namespace

std::unique_ptr<CheckpointTensors> tensors_in_layout(std::unique_ptr<CheckpointTensors> stored, KeyLayout layout,
                                                     const std::string& layout_name,
                                                     const std::set<std::string>& dropped) {
  return std::make_unique<LayoutTensors>(std::move(stored), std::move(layout), layout_name, dropped);
}

}  // namespace flashps
