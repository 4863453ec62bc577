// Mask editing through the real widgets: strokes set the pixels the SDK's public mask painting
// (flashps::sdk::MaskStroke, mask::fill_polygon) computes for the
// brush's size and hardness, undo/redo restore exact masks, invert/clear/fill, lasso and
// rectangle to mask, bad files end in an error message, settings persist.
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>
#include <flashps/flashps.hpp>

#include "app_settings.h"
#include "canvas_view.h"
#include "document.h"
#include "generation_panel.h"
#include "image_convert.h"
#include "main_window.h"
#include "paint_test_support.h"

using namespace flashps_paint;
using namespace flashps_paint::test;

namespace {

int count_set(const Image& mask) {
  int count = 0;
  for (uint8_t value : mask.pixels) count += value >= 128;
  return count;
}

}  // namespace

class MaskEditingTest : public QObject {
  Q_OBJECT

 private:
  std::unique_ptr<MainWindow> window_;
  CanvasView* canvas() { return &window_->canvas(); }
  Document* document() { return &window_->document(); }

  QPoint widgetPoint(double x, double y) { return canvas()->imageToWidget(QPointF(x, y)).toPoint(); }
  QPointF imagePoint(QPoint widget) { return canvas()->widgetToImage(QPointF(widget)); }

  // Drags over the canvas through the given image points; returns the image points the canvas
  // actually received (widget coordinates are whole pixels).
  std::vector<flashps::sdk::Point> drag(const std::vector<QPointF>& path, Qt::KeyboardModifiers modifiers = {}) {
    std::vector<flashps::sdk::Point> received;
    for (size_t i = 0; i < path.size(); ++i) {
      const QPoint point = widgetPoint(path[i].x(), path[i].y());
      const QPointF image = imagePoint(point);
      received.push_back({image.x(), image.y()});
      if (i == 0) {
        QTest::mousePress(canvas(), Qt::LeftButton, modifiers, point);
      } else {
        QMouseEvent move(QEvent::MouseMove, QPointF(point), canvas()->mapToGlobal(QPointF(point)), Qt::NoButton,
                         Qt::LeftButton, modifiers);
        QApplication::sendEvent(canvas(), &move);
      }
    }
    QTest::mouseRelease(canvas(), Qt::LeftButton, modifiers, widgetPoint(path.back().x(), path.back().y()));
    return received;
  }

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // settings go to a test folder, not the user's
    QSettings("FlashPS", "flashps-paint").clear();
  }

  void cleanupTestCase() { QSettings("FlashPS", "flashps-paint").clear(); }

  void init() {
    window_ = std::make_unique<MainWindow>();
    window_->resize(1200, 800);
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    document()->setImage(gradient_image(200, 150, 90));
    canvas()->setZoom(2.0);
  }

  void cleanup() { window_.reset(); }

  void strokeUsesBrushSizeAndHardness() {
    for (const double hardness : {1.0, 0.0}) {
      document()->clearMask();
      canvas()->setTool(Tool::brush);
      canvas()->setBrushSize(20);
      canvas()->setBrushHardness(hardness);
      const auto received = drag({{40, 60}, {80, 62}, {120, 75}});
      // The same stroke painted by the SDK directly: identical pixels.
      Image expected(200, 150, 1);
      flashps::sdk::MaskStroke stroke(expected, canvas()->brush(), received[0].x, received[0].y);
      for (size_t i = 1; i < received.size(); ++i) stroke.extend(received[i].x, received[i].y);
      QVERIFY(document()->mask().pixels == expected.pixels);
      // Size: full strength on the path, nothing beyond the radius.
      // (A soft brush is full only at its exact centre, which falls between pixel centres.)
      QVERIFY(mask_at(document()->mask(), int(received[0].x), int(received[0].y)) >= (hardness == 1.0 ? 255 : 245));
      QCOMPARE(int(mask_at(document()->mask(), int(received[0].x), int(received[0].y) + 12)), 0);
      // Hardness: 7 px from the path (70% of the radius) is full with a hard brush, partial with a soft one.
      const int at_seven = mask_at(document()->mask(), int(received[0].x) - 7, int(received[0].y));
      if (hardness == 1.0) QCOMPARE(at_seven, 255);
      else QVERIFY2(at_seven > 0 && at_seven < 128, qPrintable(QString::number(at_seven)));
    }
  }

  void bracketKeysAndAltDragResizeTheBrush() {
    canvas()->setTool(Tool::brush);
    canvas()->setBrushSize(20);
    canvas()->setFocus();
    QTest::keyClick(canvas(), Qt::Key_BracketRight);
    QVERIFY(canvas()->brush().diameter > 20);
    QTest::keyClick(canvas(), Qt::Key_BracketLeft);
    QTest::keyClick(canvas(), Qt::Key_BracketLeft);
    QVERIFY(canvas()->brush().diameter < 20);
    canvas()->setBrushSize(20);
    const Image before = document()->mask();
    drag({{50, 50}, {60, 50}}, Qt::AltModifier);  // 10 image px = 20 screen px at 200%
    QVERIFY2(canvas()->brush().diameter > 30, qPrintable(QString::number(canvas()->brush().diameter)));
    QVERIFY(document()->mask().pixels == before.pixels);  // resizing does not paint
  }

  void eraserLowersTheMask() {
    document()->fillMask();
    canvas()->setTool(Tool::eraser);
    canvas()->setBrushSize(10);
    canvas()->setBrushHardness(1.0);
    drag({{100, 75}, {101, 75}});
    QCOMPARE(int(mask_at(document()->mask(), 100, 75)), 0);
    QCOMPARE(int(mask_at(document()->mask(), 10, 10)), 255);
  }

  void undoRedoRestoreExactMasks() {
    std::vector<Image> states{document()->mask()};
    canvas()->setTool(Tool::brush);
    canvas()->setBrushHardness(0.3);
    drag({{30, 30}, {90, 40}});
    states.push_back(document()->mask());
    canvas()->setTool(Tool::rectangle);
    drag({{100, 20}, {140, 70}});
    states.push_back(document()->mask());
    document()->invertMask();
    states.push_back(document()->mask());
    canvas()->setTool(Tool::eraser);
    drag({{50, 100}, {150, 100}});
    states.push_back(document()->mask());
    QCOMPARE(document()->undoStack().count(), 4);
    for (int i = int(states.size()) - 2; i >= 0; --i) {
      document()->undoStack().undo();
      QVERIFY2(document()->mask().pixels == states[i].pixels, qPrintable(QString("undo to state %1").arg(i)));
    }
    for (size_t i = 1; i < states.size(); ++i) {
      document()->undoStack().redo();
      QVERIFY2(document()->mask().pixels == states[i].pixels, qPrintable(QString("redo to state %1").arg(i)));
    }
  }

  // Accepting a result of another size (Expand Canvas) gives an empty mask of that size; undo
  // brings back the old image with its mask, and painting works on the new size.
  void acceptingALargerImageResizesTheMask() {
    document()->fillMask();
    const Image mask_before = document()->mask();
    document()->replaceImage(gradient_image(260, 190, 40), "Expand Canvas");
    QCOMPARE(int(document()->image().width), 260);
    QCOMPARE(int(document()->mask().width), 260);
    QCOMPARE(int(document()->mask().height), 190);
    QCOMPARE(count_set(document()->mask()), 0);
    document()->fillMask();
    QCOMPARE(count_set(document()->mask()), 260 * 190);
    document()->undoStack().undo();  // the fill
    document()->undoStack().undo();  // the replacement
    QCOMPARE(int(document()->image().width), 200);
    QVERIFY(document()->mask().pixels == mask_before.pixels);
  }

  void invertClearFill() {
    canvas()->setTool(Tool::rectangle);
    drag({{0, 0}, {100, 150}});
    QCOMPARE(count_set(document()->mask()), 100 * 150);
    document()->invertMask();
    QCOMPARE(count_set(document()->mask()), 100 * 150);
    QCOMPARE(int(mask_at(document()->mask(), 0, 0)), 0);
    QCOMPARE(int(mask_at(document()->mask(), 199, 0)), 255);
    document()->clearMask();
    QCOMPARE(count_set(document()->mask()), 0);
    document()->fillMask();
    QCOMPARE(count_set(document()->mask()), 200 * 150);
  }

  void lassoAndRectangleToMask() {
    canvas()->setTool(Tool::lasso);
    const auto polygon = drag({{20, 20}, {120, 30}, {140, 120}, {40, 110}});
    Image expected(200, 150, 1);
    flashps::sdk::mask::fill_polygon(expected, polygon, 255);
    QVERIFY(count_set(expected) > 5000);
    QVERIFY(document()->mask().pixels == expected.pixels);
    // Alt on release subtracts.
    canvas()->setTool(Tool::rectangle);
    drag({{60, 50}, {80, 70}}, Qt::AltModifier);
    QCOMPARE(int(mask_at(document()->mask(), 70, 60)), 0);
    QCOMPARE(int(mask_at(document()->mask(), 100, 60)), 255);
  }

  void zoomAndPanKeepTheImageUnderThePointer() {
    const QPoint anchor(300, 200);
    const QPointF before = canvas()->widgetToImage(anchor);
    QWheelEvent wheel(anchor, canvas()->mapToGlobal(anchor), QPoint(), QPoint(0, 120), Qt::NoButton,
                      Qt::ControlModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(canvas(), &wheel);
    QCOMPARE(canvas()->zoom(), 2.5);
    const QPointF after = canvas()->widgetToImage(anchor);
    QVERIFY(std::abs(after.x() - before.x()) < 1e-6 && std::abs(after.y() - before.y()) < 1e-6);
    QTest::mousePress(canvas(), Qt::MiddleButton, {}, QPoint(100, 100));
    QMouseEvent move(QEvent::MouseMove, QPointF(130, 110), canvas()->mapToGlobal(QPointF(130, 110)), Qt::NoButton,
                     Qt::MiddleButton, {});
    QApplication::sendEvent(canvas(), &move);
    QTest::mouseRelease(canvas(), Qt::MiddleButton, {}, QPoint(130, 110));
    QCOMPARE(canvas()->imageToWidget(after), QPointF(anchor) + QPointF(30, 10));
    QVERIFY(document()->undoStack().count() == 0);  // panning does not paint
  }

  void badFilesGiveTheSdkMessage() {
    QSignalSpy errors(window_.get(), &MainWindow::errorShown);
    QVERIFY(window_->openImage("/nonexistent/picture.png"));  // decoded in the background
    QVERIFY(errors.wait(30000));
    QVERIFY2(window_->lastError().contains("picture.png"), qPrintable(window_->lastError()));
    QTemporaryDir dir;
    const QString garbage = dir.filePath("broken.png");
    QFile file(garbage);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("\x89PNG\r\n\x1a\n this is not a png");
    file.close();
    QVERIFY(window_->openImage(garbage));
    QVERIFY(errors.wait(30000));
    QCOMPARE(errors.count(), 2);
    QCOMPARE(document()->image().width, 200);  // the document is untouched
  }

  void settingsPersist() {
    AppSettings settings;
    settings.brush_size = 77;
    settings.generation.steps = 9;
    settings.generation.prompt = "a red bench";
    settings.overlay_colour = QColor(10, 200, 30);
    settings.generation.texture = 0;
    settings.save();
    const AppSettings loaded = AppSettings::load();
    QCOMPARE(loaded.brush_size, 77.0);
    QCOMPARE(loaded.generation.steps, 9);
    QCOMPARE(loaded.generation.prompt, QString("a red bench"));
    QCOMPARE(loaded.overlay_colour, QColor(10, 200, 30));
    QCOMPARE(loaded.generation.texture, 0);
    // The panel shows and returns each texture choice, the model's by default.
    QCOMPARE(GenerationSettings().texture, -1);
    for (int texture : {1, 0, -1}) {
      GenerationSettings generation = window_->panel().settings();
      generation.texture = texture;
      window_->panel().setSettings(generation);
      QCOMPARE(window_->panel().settings().texture, texture);
    }
  }
};

QTEST_MAIN(MaskEditingTest)
#include "test_mask_editing.moc"
