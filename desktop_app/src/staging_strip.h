// The staging strip: generated variations as thumbnails with prev/next, Accept (applies the
// selected one as the new image, undoable), Discard, and a before/after toggle.
#pragma once
#include <QWidget>
#include <vector>

#include "generation_controller.h"

class QLabel;
class QListWidget;
class QPushButton;

namespace flashps_paint {

class StagingStrip : public QWidget {
  Q_OBJECT
 public:
  explicit StagingStrip(QWidget* parent = nullptr);

  void addVariation(const Variation& variation);
  void clear();
  int count() const { return int(variations_.size()); }
  int currentIndex() const;
  void setCurrentIndex(int index);
  const Variation* current() const;

  void next();
  void previous();
  QPushButton* acceptButton() const { return accept_; }
  QPushButton* beforeAfterButton() const { return before_after_; }

 Q_SIGNALS:
  void currentChanged(const QImage& image);  // null when the strip empties
  void acceptRequested(const QImage& image);
  void showOriginalToggled(bool original);

 private:
  void onSelectionChanged();
  void discardCurrent();

  std::vector<Variation> variations_;
  QListWidget* list_ = nullptr;
  QLabel* caption_ = nullptr;
  QPushButton *previous_ = nullptr, *next_ = nullptr, *accept_ = nullptr, *discard_ = nullptr,
              *before_after_ = nullptr;
};

}  // namespace flashps_paint
