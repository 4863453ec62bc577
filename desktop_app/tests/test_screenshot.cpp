// The main window mid-edit (photo, painted mask, staging strip with generated variations),
// grabbed with QWidget::grab for the README (docs/flashps-paint.png is a copy of one).
// Writes $FLASHPS_SCREENSHOT_OUT, else the build folder's flashps-paint.png.
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "canvas_view.h"
#include "document.h"
#include "generation_controller.h"
#include "generation_panel.h"
#include "main_window.h"
#include "paint_test_support.h"
#include "staging_strip.h"

using namespace flashps_paint;
using namespace flashps_paint::test;

class ScreenshotTest : public QObject {
  Q_OBJECT
  QTemporaryDir store_dir_;

 private Q_SLOTS:
  void mainWindowMidEdit() {
    QVERIFY(isolate_settings_and_store(store_dir_));
    MainWindow window;
    window.resize(1280, 800);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy opened(&window, &MainWindow::imageOpened);
    QVERIFY(window.openImage(FLASHPS_SOURCE_DIR "/samples/images/fig.jpg"));
    QVERIFY(opened.wait(30000));
    GenerationSettings settings;
    settings.steps = 6;
    settings.variations = 3;
    settings.seed = 11;
    settings.feather_pixels = 4;
    window.panel().setSettings(settings);

    // A brush stroke over the fruit, painted through the canvas like a user would.
    CanvasView& canvas = window.canvas();
    canvas.setBrushSize(70);
    canvas.setBrushHardness(0.7);
    const auto at = [&](double x, double y) { return canvas.imageToWidget(QPointF(x, y)).toPoint(); };
    QTest::mousePress(&canvas, Qt::LeftButton, {}, at(200, 220));
    for (int i = 1; i <= 20; ++i) {
      const QPoint point = at(200 + 6 * i, 220 + 3 * i);
      QMouseEvent move(QEvent::MouseMove, QPointF(point), canvas.mapToGlobal(QPointF(point)), Qt::NoButton,
                       Qt::LeftButton, {});
      QApplication::sendEvent(&canvas, &move);
    }
    QTest::mouseRelease(&canvas, Qt::LeftButton, {}, at(320, 280));
    QVERIFY(window.document().undoStack().count() == 1);

    QSignalSpy finished(&window.controller(), &GenerationController::finished);
    window.generate();
    QVERIFY(finished.wait(240000));
    QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));
    QCOMPARE(window.strip().count(), 3);
    // A second edit of the same image replays the captured template: the panel shows the hit
    // and the edit's time.
    window.generate();
    QVERIFY(finished.wait(240000));
    QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));
    QCOMPARE(window.strip().count(), 6);
    QVERIFY(window.panel().cacheStatusLabel()->text().contains("hit"));
    window.strip().setCurrentIndex(4);
    window.strip().beforeAfterButton()->setChecked(true);  // the photo with its mask; variations below
    QVERIFY(canvas.showingOriginal());
    QTest::qWait(50);

    const QImage shot = window.grab().toImage();
    QVERIFY(!shot.isNull());
    QCOMPARE(shot.size(), window.size() * window.devicePixelRatio());
    const QByteArray out = qgetenv("FLASHPS_SCREENSHOT_OUT");
    const QString path = out.isEmpty() ? QString(FLASHPS_SCREENSHOT_PATH) : QString::fromLocal8Bit(out);
    QVERIFY2(shot.save(path), qPrintable(path));
    qInfo("wrote %s", qPrintable(path));
  }
};

QTEST_MAIN(ScreenshotTest)
#include "test_screenshot.moc"
