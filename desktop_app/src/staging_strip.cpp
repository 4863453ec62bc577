#include "staging_strip.h"

#include <QHBoxLayout>
#include <QIcon>
#include <QKeySequence>
#include <QPixmap>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

namespace flashps_paint {

namespace {
constexpr int kThumbnail = 96;
}

StagingStrip::StagingStrip(QWidget* parent) : QWidget(parent) {
  auto* layout = new QHBoxLayout(this);
  list_ = new QListWidget;
  list_->setViewMode(QListView::IconMode);
  list_->setFlow(QListView::LeftToRight);
  list_->setWrapping(false);
  list_->setIconSize(QSize(kThumbnail, kThumbnail));
  list_->setFixedHeight(kThumbnail + 30);
  list_->setMovement(QListView::Static);
  layout->addWidget(list_, 1);

  auto* buttons = new QVBoxLayout;
  caption_ = new QLabel(tr("No variations yet"));
  auto* navigation = new QHBoxLayout;
  previous_ = new QPushButton(tr("◀ Prev"));
  next_ = new QPushButton(tr("Next ▶"));
  navigation->addWidget(previous_);
  navigation->addWidget(next_);
  accept_ = new QPushButton(tr("Accept"));
  discard_ = new QPushButton(tr("Discard"));
  before_after_ = new QPushButton(tr("Before/after"));
  before_after_->setCheckable(true);
  before_after_->setToolTip(tr("Show the original image (\\)"));
  before_after_->setShortcut(QKeySequence(Qt::Key_Backslash));
  buttons->addWidget(caption_);
  buttons->addLayout(navigation);
  auto* actions = new QHBoxLayout;
  actions->addWidget(accept_);
  actions->addWidget(discard_);
  actions->addWidget(before_after_);
  buttons->addLayout(actions);
  layout->addLayout(buttons);

  connect(list_, &QListWidget::currentRowChanged, this, &StagingStrip::onSelectionChanged);
  connect(previous_, &QPushButton::clicked, this, &StagingStrip::previous);
  connect(next_, &QPushButton::clicked, this, &StagingStrip::next);
  connect(discard_, &QPushButton::clicked, this, &StagingStrip::discardCurrent);
  connect(accept_, &QPushButton::clicked, this, [this] {
    if (const Variation* variation = current()) Q_EMIT acceptRequested(variation->image);
  });
  connect(before_after_, &QPushButton::toggled, this, &StagingStrip::showOriginalToggled);
  onSelectionChanged();
}

void StagingStrip::addVariation(const Variation& variation) {
  variations_.push_back(variation);
  auto* item = new QListWidgetItem(
      QIcon(QPixmap::fromImage(variation.image.scaled(kThumbnail, kThumbnail, Qt::KeepAspectRatio, Qt::SmoothTransformation))),
      QString::number(variations_.size()));
  item->setToolTip(variation.summary);
  list_->addItem(item);
  list_->setCurrentRow(list_->count() - 1);  // show the newest
}

void StagingStrip::clear() {
  variations_.clear();
  list_->clear();
  onSelectionChanged();
}

int StagingStrip::currentIndex() const { return list_->currentRow(); }
void StagingStrip::setCurrentIndex(int index) { list_->setCurrentRow(index); }

const Variation* StagingStrip::current() const {
  const int row = list_->currentRow();
  return row >= 0 && row < count() ? &variations_[row] : nullptr;
}

void StagingStrip::next() {
  if (count() > 0) list_->setCurrentRow((currentIndex() + 1) % count());
}

void StagingStrip::previous() {
  if (count() > 0) list_->setCurrentRow((currentIndex() + count() - 1) % count());
}

void StagingStrip::onSelectionChanged() {
  const Variation* variation = current();
  for (QPushButton* button : {previous_, next_, accept_, discard_, before_after_}) button->setEnabled(variation);
  caption_->setText(variation ? tr("%1 of %2: %3").arg(currentIndex() + 1).arg(count()).arg(variation->summary)
                              : tr("No variations yet"));
  Q_EMIT currentChanged(variation ? variation->image : QImage());
}

void StagingStrip::discardCurrent() {
  const int row = currentIndex();
  if (row < 0) return;
  variations_.erase(variations_.begin() + row);
  delete list_->takeItem(row);
  onSelectionChanged();
}

}  // namespace flashps_paint
