#include "mask_commands.h"

#include "document.h"

namespace flashps_paint {

MaskEditCommand::MaskEditCommand(Document& document, const QString& name, flashps::sdk::Rect box,
                                 Image before, Image after)
    : QUndoCommand(name), document_(document), box_(box), before_(std::move(before)), after_(std::move(after)) {}

void MaskEditCommand::undo() { document_.restoreMaskRegion(box_, before_); }

void MaskEditCommand::redo() {
  if (applied_) {
    applied_ = false;
    return;
  }
  document_.restoreMaskRegion(box_, after_);
}

ReplaceImageCommand::ReplaceImageCommand(Document& document, const QString& name, Image before, Image after,
                                         Image mask_before, Image mask_after)
    : QUndoCommand(name),
      document_(document),
      before_(std::move(before)),
      after_(std::move(after)),
      mask_before_(std::move(mask_before)),
      mask_after_(std::move(mask_after)) {}

void ReplaceImageCommand::undo() { document_.setImagePixels(before_, mask_before_); }
void ReplaceImageCommand::redo() { document_.setImagePixels(after_, mask_after_); }

}  // namespace flashps_paint
