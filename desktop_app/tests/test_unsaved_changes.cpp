// Closing the window (Ctrl+Q, the window's close button) or opening another image asks before
// unsaved changes are discarded: Save / Discard / Cancel through the window's prompt hook, which
// the test answers. No model is needed: a variation is put on the staging strip directly.
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>
#include <flashps/flashps.hpp>

#include "document.h"
#include "generation_controller.h"
#include "image_convert.h"
#include "main_window.h"
#include "paint_test_support.h"
#include "staging_strip.h"

using namespace flashps_paint;
using namespace flashps_paint::test;

class UnsavedChangesTest : public QObject {
  Q_OBJECT
  std::unique_ptr<MainWindow> window_;
  QTemporaryDir dir_;
  QStringList questions_;                  // what the prompt was asked
  DiscardChoice answer_ = DiscardChoice::cancel;
  QString save_to_;                        // the save dialog's answer

  void acceptAVariation() {
    Variation variation;
    variation.image = to_qimage(gradient_image(120, 80, 200));
    variation.seed = 1;
    window_->strip().addVariation(variation);
    QTest::mouseClick(window_->strip().acceptButton(), Qt::LeftButton);
    QVERIFY(window_->document().imageModified());
  }
  // Closes as the window manager or Ctrl+Q would; true when the window went away.
  bool closeWindow() {
    window_->close();
    return !window_->isVisible();
  }

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // settings go to a test folder, not the user's
    QSettings("FlashPS", "flashps-paint").clear();
    QVERIFY(dir_.isValid());
  }
  void cleanupTestCase() { QSettings("FlashPS", "flashps-paint").clear(); }

  void init() {
    questions_.clear();
    save_to_.clear();
    window_ = std::make_unique<MainWindow>();
    UserPrompts prompts;
    prompts.confirm_discard = [this](const QString& question) {
      questions_ << question;
      return answer_;
    };
    prompts.save_path = [this](const QString&, const QString&, const QString&) { return save_to_; };
    window_->setUserPrompts(prompts);
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    window_->document().setImage(gradient_image(120, 80, 10));
  }
  void cleanup() { window_.reset(); }

  void closingWithoutChangesDoesNotAsk() {
    QVERIFY(closeWindow());
    QVERIFY(questions_.isEmpty());
  }

  void cancelKeepsTheWindowAndTheAcceptedVariation() {
    acceptAVariation();
    answer_ = DiscardChoice::cancel;
    QVERIFY(!closeWindow());
    QCOMPARE(questions_.size(), 1);
    QVERIFY2(questions_.front().contains("accepted variation"), qPrintable(questions_.front()));
    QVERIFY(window_->document().imageModified());
    QVERIFY(window_->isWindowModified());  // the title's [*]
  }

  void ctrlQAsksToo() {
    acceptAVariation();
    answer_ = DiscardChoice::cancel;
    window_->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(window_.get()));
    QTest::keyClick(window_.get(), Qt::Key_Q, Qt::ControlModifier);
    QCOMPARE(questions_.size(), 1);
    QVERIFY(window_->isVisible());
    answer_ = DiscardChoice::discard;
    QTest::keyClick(window_.get(), Qt::Key_Q, Qt::ControlModifier);
    QCOMPARE(questions_.size(), 2);
    QVERIFY(!window_->isVisible());
  }

  void saveWritesTheImageThenCloses() {
    acceptAVariation();
    const Image accepted = window_->document().image();
    answer_ = DiscardChoice::save;
    save_to_ = dir_.filePath("saved.png");
    QVERIFY(closeWindow());
    QCOMPARE(questions_.size(), 1);
    const Image written = Image::load(save_to_.toStdString());
    QVERIFY(written.width == accepted.width && written.height == accepted.height);
    QVERIFY(to_rgb(written).pixels == accepted.pixels);
  }

  void cancellingTheSaveDialogKeepsTheWindow() {
    acceptAVariation();
    answer_ = DiscardChoice::save;
    save_to_.clear();  // the user closes the file dialog
    QVERIFY(!closeWindow());
    QVERIFY(window_->document().imageModified());
  }

  void savedOrUndoneChangesDoNotAsk() {
    acceptAVariation();
    window_->document().undoStack().undo();  // back to the opened image
    QVERIFY(!window_->document().imageModified());
    QVERIFY(!window_->isWindowModified());
    window_->document().undoStack().redo();
    QVERIFY(window_->isWindowModified());
    window_->document().markImageSaved();
    QVERIFY(closeWindow());
    QVERIFY(questions_.isEmpty());
  }

  void maskEditsAsk() {
    window_->document().fillRectangle(QRect(10, 10, 30, 30), true);
    answer_ = DiscardChoice::cancel;
    QVERIFY(!closeWindow());
    QCOMPARE(questions_.size(), 1);
    QVERIFY2(questions_.front().contains("mask"), qPrintable(questions_.front()));
    // Save writes the mask (the image is unchanged: only the mask's dialog is answered).
    answer_ = DiscardChoice::save;
    save_to_ = dir_.filePath("mask.png");
    QVERIFY(closeWindow());
    const Image written = Image::load(save_to_.toStdString());
    QCOMPARE(int(written.width), 120);
    QCOMPARE(int(mask_at(written, 20, 20)), 255);
    QCOMPARE(int(mask_at(written, 60, 60)), 0);
  }

  void openingAnotherImageAsks() {
    acceptAVariation();
    const QString other = dir_.filePath("other.png");
    gradient_image(64, 48, 90).save(other.toStdString());
    answer_ = DiscardChoice::cancel;
    QVERIFY(!window_->openImage(other));
    QCOMPARE(int(window_->document().image().width), 120);
    QVERIFY(!window_->loading());
    answer_ = DiscardChoice::discard;
    QSignalSpy opened(window_.get(), &MainWindow::imageOpened);
    QVERIFY(window_->openImage(other));
    QVERIFY(opened.wait(30000));
    QCOMPARE(int(window_->document().image().width), 64);
    QVERIFY(!window_->document().imageModified());
    QVERIFY(closeWindow());
    QCOMPARE(questions_.size(), 2);
  }
};

QTEST_MAIN(UnsavedChangesTest)
#include "test_unsaved_changes.moc"
