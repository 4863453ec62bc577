// The edited document: the image, its mask layer (1 channel, 255 = regenerate) and one undo
// stack for every mask edit and accepted variation. Mask edits go through the SDK's public mask
// functions (flashps::sdk::mask, MaskStroke) so other front ends paint the same pixels.
#pragma once
#include <QObject>
#include <QRect>
#include <QUndoStack>
#include <memory>
#include <vector>

#include <flashps/flashps.hpp>

#include "image_convert.h"

namespace flashps_paint {

class Document : public QObject {
  Q_OBJECT
 public:
  explicit Document(QObject* parent = nullptr);

  bool empty() const { return image_.empty(); }
  const Image& image() const { return image_; }
  const Image& mask() const { return mask_; }
  QUndoStack& undoStack() { return undo_; }

  // A new image (decoded by the caller, off the UI thread): empty mask, cleared history, nothing
  // unsaved.
  void setImage(Image image);

  // Unsaved changes: the image differs from the one opened or last saved (an accepted variation
  // not undone), the mask from the last saved or loaded one (or from empty).
  bool imageModified() const;
  bool maskModified() const;
  void markImageSaved() { saved_image_ = image_; }
  void markMaskSaved() { saved_mask_ = mask_; }

  // A brush stroke: pixels change as it goes; endStroke() records one undo step.
  void beginStroke(const flashps::sdk::Brush& brush, double x, double y);
  void strokeTo(double x, double y);
  void endStroke();

  void fillRectangle(const QRect& rect, bool add);
  void fillLasso(const std::vector<flashps::sdk::Point>& polygon, bool add);
  void invertMask();
  void clearMask();
  void fillMask();
  // An image read as a mask as every edit reads it (mask::for_image: resized with nearest
  // neighbour to the image, then the SDK's one rule); one undo step.
  void setLoadedMask(const Image& loaded);

  // Accepting a variation: undoable. A result of another size (Expand Canvas) empties the mask.
  void replaceImage(const Image& image, const QString& name);

  // For the undo commands.
  void restoreMaskRegion(const flashps::sdk::Rect& box, const Image& pixels);
  void setImagePixels(const Image& image, const Image& mask);

 Q_SIGNALS:
  void imageChanged();
  void maskChanged(QRect region);  // in image pixels

 private:
  // Applies `edit` to the whole mask as one undo step named `name`.
  template <typename Edit>
  void editWholeMask(const QString& name, Edit edit);
  void pushMaskEdit(const QString& name, const flashps::sdk::Rect& box, const Image& before_mask);

  Image image_, mask_;
  Image saved_image_, saved_mask_;  // what is on disk (or was opened), to tell unsaved changes
  QUndoStack undo_;
  std::unique_ptr<flashps::sdk::MaskStroke> stroke_;
  Image stroke_start_;  // the mask before the stroke, for its undo step
  QString stroke_name_;
};

QRect to_qrect(const flashps::sdk::Rect& box);

}  // namespace flashps_paint
