// Undo commands of the document: every mask edit stores the changed box's pixels before and
// after (not the whole mask), so a long session of strokes stays small; accepting a variation
// stores both whole images.
#pragma once
#include <QUndoCommand>

#include "image_convert.h"

namespace flashps_paint {

class Document;

class MaskEditCommand : public QUndoCommand {
 public:
  // `before` and `after` are crops of the mask at `box`; the edit is already applied.
  MaskEditCommand(Document& document, const QString& name, flashps::sdk::Rect box, Image before,
                  Image after);
  void undo() override;
  void redo() override;

 private:
  Document& document_;
  flashps::sdk::Rect box_;
  Image before_, after_;
  bool applied_ = true;  // skip the redo() QUndoStack::push calls
};

class ReplaceImageCommand : public QUndoCommand {
 public:
  // The masks too: an image of another size comes with a mask of its size.
  ReplaceImageCommand(Document& document, const QString& name, Image before, Image after, Image mask_before,
                      Image mask_after);
  void undo() override;
  void redo() override;

 private:
  Document& document_;
  Image before_, after_, mask_before_, mask_after_;
};

}  // namespace flashps_paint
