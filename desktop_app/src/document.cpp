#include "document.h"

#include "core/error.h"
#include "core/mask_ops.h"
#include "mask_commands.h"

namespace flashps_paint {

using flashps::Image;
using flashps::PixelBox;

QRect to_qrect(const PixelBox& box) { return box.empty() ? QRect() : QRect(box.x, box.y, box.w, box.h); }

Document::Document(QObject* parent) : QObject(parent) {}

void Document::open(const QString& path) {
  setImage(flashps::to_rgb(flashps::read_image(path.toStdString())));
}

void Document::setImage(Image image) {
  stroke_.reset();
  image_ = std::move(image);
  mask_ = Image(image_.width, image_.height, 1, 0);
  undo_.clear();
  Q_EMIT imageChanged();
  Q_EMIT maskChanged(QRect(0, 0, image_.width, image_.height));
}

void Document::beginStroke(const flashps::edit::Brush& brush, double x, double y) {
  if (empty()) return;
  stroke_start_ = mask_;
  stroke_name_ = brush.erase ? tr("Erase") : tr("Brush stroke");
  stroke_ = std::make_unique<flashps::edit::MaskStroke>(mask_, brush);
  Q_EMIT maskChanged(to_qrect(stroke_->begin(x, y)));
}

void Document::strokeTo(double x, double y) {
  if (!stroke_) return;
  const PixelBox touched = stroke_->extend(x, y);
  if (!touched.empty()) Q_EMIT maskChanged(to_qrect(touched));
}

void Document::endStroke() {
  if (!stroke_) return;
  const PixelBox box = stroke_->changed();
  stroke_.reset();
  if (!box.empty()) pushMaskEdit(stroke_name_, box, stroke_start_);
  stroke_start_ = Image();
}

void Document::pushMaskEdit(const QString& name, const PixelBox& box, const Image& before_mask) {
  undo_.push(new MaskEditCommand(*this, name, box, flashps::crop(before_mask, box.x, box.y, box.w, box.h),
                                 flashps::crop(mask_, box.x, box.y, box.w, box.h)));
}

template <typename Edit>
void Document::editWholeMask(const QString& name, Edit edit) {
  if (empty()) return;
  const Image before = mask_;
  edit(mask_);
  pushMaskEdit(name, {0, 0, mask_.width, mask_.height}, before);
  Q_EMIT maskChanged(QRect(0, 0, mask_.width, mask_.height));
}

void Document::fillRectangle(const QRect& rect, bool add) {
  if (empty()) return;
  const Image before = mask_;
  const PixelBox box = flashps::edit::fill_rectangle(mask_, {rect.x(), rect.y(), rect.width(), rect.height()},
                                                      add ? 255 : 0);
  if (box.empty()) return;
  pushMaskEdit(add ? tr("Rectangle to mask") : tr("Rectangle from mask"), box, before);
  Q_EMIT maskChanged(to_qrect(box));
}

void Document::fillLasso(const std::vector<flashps::edit::Point>& polygon, bool add) {
  if (empty()) return;
  const Image before = mask_;
  const PixelBox box = flashps::edit::fill_polygon(mask_, polygon, add ? 255 : 0);
  if (box.empty()) return;
  pushMaskEdit(add ? tr("Lasso to mask") : tr("Lasso from mask"), box, before);
  Q_EMIT maskChanged(to_qrect(box));
}

void Document::invertMask() { editWholeMask(tr("Invert mask"), flashps::edit::invert_mask); }
void Document::clearMask() { editWholeMask(tr("Clear mask"), flashps::edit::clear_mask); }
void Document::fillMask() { editWholeMask(tr("Fill mask"), flashps::edit::fill_mask); }

void Document::loadMask(const QString& path) {
  if (empty()) throw flashps::Error("open an image before loading a mask");
  Image loaded = flashps::mask_values(flashps::read_image(path.toStdString()));
  if (loaded.width != mask_.width || loaded.height != mask_.height)
    loaded = flashps::resize_nearest(loaded, mask_.width, mask_.height);
  editWholeMask(tr("Load mask"), [&loaded](Image& mask) { mask = loaded; });
}

void Document::replaceImage(const Image& image, const QString& name) {
  if (empty()) return;
  undo_.push(new ReplaceImageCommand(*this, name, image_, image));
}

void Document::restoreMaskRegion(const PixelBox& box, const Image& pixels) {
  flashps::paste(mask_, pixels, box.x, box.y);
  Q_EMIT maskChanged(to_qrect(box));
}

void Document::setImagePixels(const Image& image) {
  image_ = image;
  Q_EMIT imageChanged();
}

}  // namespace flashps_paint
