// Undo commands of the document: every mask edit stores the changed box's pixels before and
// after (not the whole mask), so a long session of strokes stays small; accepting a variation
// stores both whole images.
#pragma once
#include <QUndoCommand>

#include "core/image.h"
#include "core/mask_ops.h"

namespace flashps_paint {

class Document;

class MaskEditCommand : public QUndoCommand {
 public:
  // `before` and `after` are crops of the mask at `box`; the edit is already applied.
  MaskEditCommand(Document& document, const QString& name, flashps::PixelBox box, flashps::Image before,
                  flashps::Image after);
  void undo() override;
  void redo() override;

 private:
  Document& document_;
  flashps::PixelBox box_;
  flashps::Image before_, after_;
  bool applied_ = true;  // skip the redo() QUndoStack::push calls
};

class ReplaceImageCommand : public QUndoCommand {
 public:
  ReplaceImageCommand(Document& document, const QString& name, flashps::Image before, flashps::Image after);
  void undo() override;
  void redo() override;

 private:
  Document& document_;
  flashps::Image before_, after_;
};

}  // namespace flashps_paint
