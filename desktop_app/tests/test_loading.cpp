// Opening an image never blocks the UI thread: files are decoded on a loader thread (openImage
// returns before the document changes, and a 10 ms timer keeps ticking while a 24 MP PNG decodes),
// a load can be cancelled (the document stays as it was, the late result is dropped), and an
// unreadable file ends in the SDK's message naming it, also asynchronously.
#include <QElapsedTimer>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>
#include <flashps/flashps.hpp>

#include "document.h"
#include "image_convert.h"
#include "image_loader.h"
#include "main_window.h"
#include "paint_test_support.h"

using namespace flashps_paint;
using namespace flashps_paint::test;

namespace {

// Noise compresses badly, so decoding it takes long enough to tell a blocked UI thread.
Image noise(int width, int height) {
  Image image(width, height, 3);
  uint32_t state = 12345;
  for (uint8_t& value : image.pixels) {
    state = state * 1664525u + 1013904223u;
    value = uint8_t(state >> 24);
  }
  return image;
}

}  // namespace

class LoadingTest : public QObject {
  Q_OBJECT
  std::unique_ptr<MainWindow> window_;
  QTemporaryDir dir_;
  QString large_;  // a 6000x4000 noise PNG

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // settings go to a test folder, not the user's
    QSettings("FlashPS", "flashps-paint").clear();
    QVERIFY(dir_.isValid());
    large_ = dir_.filePath("large.png");
    noise(6000, 4000).save(large_.toStdString());
  }
  void cleanupTestCase() { QSettings("FlashPS", "flashps-paint").clear(); }

  void init() {
    window_ = std::make_unique<MainWindow>();
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
  }
  void cleanup() { window_.reset(); }

  void aLargeImageDecodesOffTheUiThread() {
    QSignalSpy opened(window_.get(), &MainWindow::imageOpened);
    EventLoopLatency latency;
    // Measured while the file decodes: it stops when the decoded image reaches the UI thread
    // (showing a 24 MP image there is the canvas's work, not the decoder's).
    connect(&window_->imageLoader(), &ImageLoader::loadingChanged, &latency, [&latency](bool loading) {
      if (!loading) latency.stop();
    });
    QElapsedTimer clock;
    clock.start();
    QVERIFY(window_->openImage(large_));
    // Returned before any pixel arrived: the decode runs elsewhere.
    QVERIFY(window_->document().empty());
    QVERIFY(window_->loading());
    QVERIFY(window_->cancelLoadingButton()->isVisibleTo(window_.get()));
    QVERIFY(opened.wait(120000));
    qInfo("decoded in %lld ms; event loop worst gap %lld ms (bound %d ms)", clock.elapsed(), latency.worstMs(),
          kWorstGapBoundMs);
    QCOMPARE(int(window_->document().image().width), 6000);
    QCOMPARE(int(window_->document().image().height), 4000);
    QVERIFY(!window_->loading());
    QVERIFY(!window_->cancelLoadingButton()->isVisibleTo(window_.get()));
    QVERIFY2(latency.worstMs() < kWorstGapBoundMs, qPrintable(QString::number(latency.worstMs())));
  }

  void cancelKeepsTheDocumentAndDropsTheResult() {
    window_->document().setImage(noise(40, 30));
    QSignalSpy opened(window_.get(), &MainWindow::imageOpened);
    QSignalSpy errors(window_.get(), &MainWindow::errorShown);
    QVERIFY(window_->openImage(large_));
    QVERIFY(window_->loading());
    QTest::mouseClick(window_->cancelLoadingButton(), Qt::LeftButton);
    QVERIFY(!window_->loading());
    QVERIFY(!window_->cancelLoadingButton()->isVisibleTo(window_.get()));
    // The abandoned decode finishes on its thread; its image never reaches the document.
    QTRY_COMPARE_WITH_TIMEOUT(window_->imageLoader().runningDecodes(), 0, 120000);
    QTest::qWait(50);  // its queued result, if any, is delivered (and dropped) now
    QCOMPARE(opened.count(), 0);
    QCOMPARE(errors.count(), 0);
    QCOMPARE(int(window_->document().image().width), 40);
  }

  void aNewerLoadReplacesARunningOne() {
    const QString small = dir_.filePath("small.png");
    noise(32, 24).save(small.toStdString());
    QSignalSpy opened(window_.get(), &MainWindow::imageOpened);
    QVERIFY(window_->openImage(large_));
    QVERIFY(window_->openImage(small));
    QVERIFY(opened.wait(30000));
    QTRY_COMPARE_WITH_TIMEOUT(window_->imageLoader().runningDecodes(), 0, 120000);
    QTest::qWait(50);
    QCOMPARE(opened.count(), 1);
    QCOMPARE(opened.front().at(0).toString(), small);
    QCOMPARE(int(window_->document().image().width), 32);
  }

  void unreadableFilesEndInTheSdkMessage() {
    QSignalSpy errors(window_.get(), &MainWindow::errorShown);
    QVERIFY(window_->openImage("/nonexistent/picture.png"));
    QVERIFY(errors.wait(30000));
    QVERIFY2(window_->lastError().contains("picture.png"), qPrintable(window_->lastError()));
    // Not a PNG past its signature: refused with a message, no image.
    const QString truncated = dir_.filePath("truncated.png");
    {
      QFile out(truncated);
      QVERIFY(out.open(QIODevice::WriteOnly));
      out.write("\x89PNG\r\n\x1a\n this is not a png");
    }
    QVERIFY(window_->openImage(truncated));
    QVERIFY(errors.wait(30000));
    QVERIFY2(window_->lastError().contains("truncated.png"), qPrintable(window_->lastError()));
    QVERIFY(window_->document().empty());
    QVERIFY(!window_->loading());
  }

  void masksLoadOffTheUiThreadToo() {
    window_->document().setImage(noise(60, 40));
    Image mask(30, 20, 1);  // half the size: resized (nearest) to the image
    for (int y = 0; y < 20; ++y)
      for (int x = 0; x < 15; ++x) mask.pixels[size_t(y) * 30 + x] = 255;
    const QString path = dir_.filePath("mask.png");
    mask.save(path.toStdString());
    QSignalSpy loaded(window_.get(), &MainWindow::maskLoaded);
    window_->loadMask(path);
    QCOMPARE(int(mask_at(window_->document().mask(), 5, 5)), 0);  // not yet: decoding elsewhere
    QVERIFY(loaded.wait(30000));
    QCOMPARE(int(mask_at(window_->document().mask(), 5, 5)), 255);
    QCOMPARE(int(mask_at(window_->document().mask(), 50, 5)), 0);
    QVERIFY(!window_->document().maskModified());  // it is the file on disk
    QCOMPARE(window_->document().undoStack().count(), 1);
  }

  // The app reads a mask file as every edit reads it (mask::for_image: the SDK's rule and its
  // nearest resize; tests/api/test_front_end_masks.cpp checks that function against the other
  // front ends): a blue stroke of another size selects the box it covers, nothing else.
  void loadedMasksSelectWhatAnEditWould() {
    window_->document().setImage(noise(60, 40));
    Image mask(30, 20, 3);  // RGB, black with a blue stroke at x 5..14, y 4..9; half the size
    for (int y = 4; y < 10; ++y)
      for (int x = 5; x < 15; ++x) mask.pixels[(size_t(y) * 30 + x) * 3 + 2] = 255;
    const QString path = dir_.filePath("blue.png");
    mask.save(path.toStdString());
    QSignalSpy loaded(window_.get(), &MainWindow::maskLoaded);
    window_->loadMask(path);
    QVERIFY(loaded.wait(30000));
    const Image& shown = window_->document().mask();
    QVERIFY(shown.pixels == flashps::sdk::mask::for_image(mask, 60, 40).pixels);
    for (int y = 0; y < 40; ++y)
      for (int x = 0; x < 60; ++x) {
        const bool selected = x >= 10 && x < 30 && y >= 8 && y < 20;
        QCOMPARE(mask_at(shown, x, y) >= 128, selected);
      }

    // The edit's own nearest resize (pixel centres), then its rule: twice the image's size, black,
    // see-through where x and y are odd (the pixels that resize keeps), opaque elsewhere. The
    // edit reads a fully see-through mask and regenerates nothing, so the app must show nothing
    // (another resize, e.g. Qt's, keeps the opaque pixels of this alpha-only mask: all selected).
    Image alpha_strokes(120, 80, 4);
    for (int y = 0; y < 80; ++y)
      for (int x = 0; x < 120; ++x) alpha_strokes.pixels[(size_t(y) * 120 + x) * 4 + 3] = (x % 2 && y % 2) ? 0 : 255;
    const QString alpha_path = dir_.filePath("alpha.png");
    alpha_strokes.save(alpha_path.toStdString());
    window_->loadMask(alpha_path);
    QVERIFY(loaded.wait(30000));
    const Image& shown_alpha = window_->document().mask();
    QVERIFY(shown_alpha.pixels == flashps::sdk::mask::for_image(alpha_strokes, 60, 40).pixels);
    for (const uint8_t value : shown_alpha.pixels) QVERIFY(value < 128);
  }
};

QTEST_MAIN(LoadingTest)
#include "test_loading.moc"
