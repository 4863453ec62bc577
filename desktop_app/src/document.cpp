#include "document.h"

#include "mask_commands.h"

namespace flashps_paint {

namespace mask = flashps::sdk::mask;
using flashps::sdk::Rect;

namespace {
bool same_pixels(const Image& a, const Image& b) {
  return a.width == b.width && a.height == b.height && a.channels == b.channels && a.pixels == b.pixels;
}
}  // namespace

QRect to_qrect(const Rect& box) { return box.empty() ? QRect() : QRect(box.x, box.y, box.width, box.height); }

Document::Document(QObject* parent) : QObject(parent) {}

void Document::setImage(Image image) {
  stroke_.reset();
  image_ = std::move(image);
  mask_ = Image(image_.width, image_.height, 1);
  saved_image_ = image_;  // before clear(): its indexChanged already sees nothing unsaved
  saved_mask_ = mask_;
  undo_.clear();
  Q_EMIT imageChanged();
  Q_EMIT maskChanged(QRect(0, 0, int(image_.width), int(image_.height)));
}

bool Document::imageModified() const { return !same_pixels(image_, saved_image_); }
bool Document::maskModified() const { return !same_pixels(mask_, saved_mask_); }

void Document::beginStroke(const flashps::sdk::Brush& brush, double x, double y) {
  if (empty()) return;
  stroke_start_ = mask_;
  stroke_name_ = brush.erase ? tr("Erase") : tr("Brush stroke");
  // The stroke paints mask_'s pixel buffer in place: mask_ keeps its size until endStroke().
  stroke_ = std::make_unique<flashps::sdk::MaskStroke>(mask_, brush, x, y);
  Q_EMIT maskChanged(to_qrect(stroke_->first_dab()));
}

void Document::strokeTo(double x, double y) {
  if (!stroke_) return;
  const Rect touched = stroke_->extend(x, y);
  if (!touched.empty()) Q_EMIT maskChanged(to_qrect(touched));
}

void Document::endStroke() {
  if (!stroke_) return;
  const Rect box = stroke_->end();
  stroke_.reset();
  if (!box.empty()) pushMaskEdit(stroke_name_, box, stroke_start_);
  stroke_start_ = Image();
}

void Document::pushMaskEdit(const QString& name, const Rect& box, const Image& before_mask) {
  undo_.push(new MaskEditCommand(*this, name, box, crop(before_mask, box), crop(mask_, box)));
}

template <typename Edit>
void Document::editWholeMask(const QString& name, Edit edit) {
  if (empty()) return;
  const Image before = mask_;
  edit(mask_);
  pushMaskEdit(name, {0, 0, int32_t(mask_.width), int32_t(mask_.height)}, before);
  Q_EMIT maskChanged(QRect(0, 0, int(mask_.width), int(mask_.height)));
}

void Document::fillRectangle(const QRect& rect, bool add) {
  if (empty()) return;
  const Image before = mask_;
  const Rect box = mask::fill_rect(mask_, {rect.x(), rect.y(), rect.width(), rect.height()}, add ? 255 : 0);
  if (box.empty()) return;
  pushMaskEdit(add ? tr("Rectangle to mask") : tr("Rectangle from mask"), box, before);
  Q_EMIT maskChanged(to_qrect(box));
}

void Document::fillLasso(const std::vector<flashps::sdk::Point>& polygon, bool add) {
  if (empty()) return;
  const Image before = mask_;
  const Rect box = mask::fill_polygon(mask_, polygon, add ? 255 : 0);
  if (box.empty()) return;
  pushMaskEdit(add ? tr("Lasso to mask") : tr("Lasso from mask"), box, before);
  Q_EMIT maskChanged(to_qrect(box));
}

void Document::invertMask() { editWholeMask(tr("Invert mask"), [](Image& m) { mask::invert(m); }); }
void Document::clearMask() { editWholeMask(tr("Clear mask"), [](Image& m) { mask::clear(m); }); }
void Document::fillMask() { editWholeMask(tr("Fill mask"), [](Image& m) { mask::fill(m); }); }

void Document::setLoadedMask(const Image& mask_image) {
  if (empty()) return;
  // The SDK's rule and resize: the mask shown is what an edit of this image regenerates.
  const Image loaded = mask::for_image(mask_image, mask_.width, mask_.height);
  // Copied into mask_'s buffer (same size), never a new buffer: a stroke may hold its pixels.
  editWholeMask(tr("Load mask"), [&loaded](Image& m) { m.pixels.assign(loaded.pixels.begin(), loaded.pixels.end()); });
  markMaskSaved();  // it is a file on disk
}

void Document::replaceImage(const Image& image, const QString& name) {
  if (empty()) return;
  // A result of another size (Expand Canvas) no longer lines up with the mask: it starts empty.
  const bool same_size = image.width == image_.width && image.height == image_.height;
  Image mask_after = same_size ? mask_ : Image(image.width, image.height, 1);
  undo_.push(new ReplaceImageCommand(*this, name, image_, image, mask_, std::move(mask_after)));
}

void Document::restoreMaskRegion(const Rect& box, const Image& pixels) {
  paste(mask_, pixels, box.x, box.y);
  Q_EMIT maskChanged(to_qrect(box));
}

void Document::setImagePixels(const Image& image, const Image& mask) {
  const bool mask_changed = mask.width != mask_.width || mask.height != mask_.height || mask.pixels != mask_.pixels;
  image_ = image;
  mask_ = mask;
  Q_EMIT imageChanged();
  if (mask_changed) Q_EMIT maskChanged(QRect(0, 0, int(mask_.width), int(mask_.height)));
}

}  // namespace flashps_paint
