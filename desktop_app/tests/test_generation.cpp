// End-to-end generation with the bundled model through the app's controller and the SDK's
// Engine: the staging strip fills, the template is captured and then hit, a run can be cancelled
// mid-way, and the UI thread's event loop stays responsive throughout (worst gap between 10 ms
// timer ticks, a responsiveness bound rather than a benchmark).
#include <QElapsedTimer>
#include <QGroupBox>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include <flashps/flashps.hpp>

#include "document.h"
#include "generation_controller.h"
#include "generation_panel.h"
#include "image_convert.h"
#include "main_window.h"
#include "paint_test_support.h"
#include "staging_strip.h"

using namespace flashps_paint;
using namespace flashps_paint::test;

class GenerationTest : public QObject {
  Q_OBJECT
  QTemporaryDir store_dir_;
  std::unique_ptr<MainWindow> window_;

  void configure(int steps, int variations, bool capture) {
    GenerationSettings settings;  // model_dir empty: the bundled model
    settings.steps = steps;
    settings.variations = variations;
    settings.seed = 5;
    settings.capture_template = capture;
    window_->panel().setSettings(settings);
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(isolate_settings_and_store(store_dir_));
    window_ = std::make_unique<MainWindow>();
    window_->resize(1200, 800);
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    // The model's native size, so each step is short.
    const QImage photo = to_qimage(Image::load(FLASHPS_SOURCE_DIR "/samples/images/fig.jpg"));
    window_->document().setImage(from_qimage(photo.scaled(256, 256, Qt::IgnoreAspectRatio, Qt::SmoothTransformation)));
    window_->document().fillRectangle(QRect(96, 96, 64, 64), true);
  }

  void cleanupTestCase() { window_.reset(); }

  void generationFillsTheStagingStripWithoutBlockingTheUi() {
    configure(/*steps=*/4, /*variations=*/2, /*capture=*/true);
    // The bundled model takes no text: once the panel has it described, prompts hidden and a note instead.
    QTRY_VERIFY_WITH_TIMEOUT(window_->panel().noTextNote()->isVisibleTo(&window_->panel()), 60000);
    QVERIFY(!window_->panel().promptBox()->isVisibleTo(&window_->panel()));
    QSignalSpy finished(&window_->controller(), &GenerationController::finished);
    QSignalSpy progress(&window_->controller(), &GenerationController::progressChanged);
    EventLoopLatency latency;
    QTest::mouseClick(window_->panel().generateButton(), Qt::LeftButton);
    QVERIFY(window_->controller().busy());
    QVERIFY(window_->panel().cancelButton()->isVisibleTo(&window_->panel()));
    QVERIFY(finished.wait(240000));
    QCOMPARE(finished.first().at(0).toBool(), false);
    QVERIFY2(window_->lastError().isEmpty(), qPrintable(window_->lastError()));
    QCOMPARE(window_->strip().count(), 2);
    QCOMPARE(window_->strip().current()->image.size(), QSize(256, 256));
    // Step progress arrived (from the engine thread, queued to this one).
    bool saw_last_step = false;
    for (const QList<QVariant>& event : progress) saw_last_step |= event.at(0).toInt() == 8 && event.at(1).toInt() == 8;
    QVERIFY(saw_last_step);
    // A fresh store: the variations missed (and say so), then the template was captured for later edits.
    const QString status = window_->panel().cacheStatusLabel()->text();
    QVERIFY2(status.startsWith("Template cache: miss: computed in full") && status.contains("captured template"),
             qPrintable(status));
    const QString timing = window_->panel().timingLabel()->text();
    QVERIFY2(timing.startsWith("2 variations together") && timing.contains("computed in full"), qPrintable(timing));
    qInfo("event loop: worst gap %lld ms over %d ticks (bound %d ms)", latency.worstMs(), latency.ticks(),
          kWorstGapBoundMs);
    QVERIFY2(latency.worstMs() < kWorstGapBoundMs, qPrintable(QString::number(latency.worstMs())));
    QVERIFY(!window_->panel().cancelButton()->isVisibleTo(&window_->panel()));
  }

  void aSecondEditHitsTheTemplateCache() {
    configure(/*steps=*/4, /*variations=*/1, /*capture=*/true);
    // Same image, a different mask inside the captured window.
    window_->document().clearMask();
    window_->document().fillRectangle(QRect(110, 100, 40, 40), true);
    QSignalSpy finished(&window_->controller(), &GenerationController::finished);
    window_->generate();
    QVERIFY(finished.wait(240000));
    QVERIFY2(window_->lastError().isEmpty(), qPrintable(window_->lastError()));
    QCOMPARE(window_->strip().count(), 3);
    const QString status = window_->panel().cacheStatusLabel()->text();
    QVERIFY2(status.startsWith("Template cache: hit: template ") && status.contains("by 1 of 1 variation"),
             qPrintable(status));
    // The time is this edit's own; the saving is the SDK's estimate for this edit, not a comparison with another run.
    const QString timing = window_->panel().timingLabel()->text();
    QVERIFY2(timing.startsWith("this edit: ") && timing.contains("less compute per step than this edit in full") &&
                 !timing.contains("computed in full"),
             qPrintable(timing));
    QVERIFY(window_->strip().current()->summary.contains("cache hit"));
  }

  void otherSettingsMissAndSaySo() {
    configure(/*steps=*/3, /*variations=*/1, /*capture=*/false);  // captured with 4 steps
    QSignalSpy finished(&window_->controller(), &GenerationController::finished);
    window_->generate();
    QVERIFY(finished.wait(240000));
    QVERIFY2(window_->lastError().isEmpty(), qPrintable(window_->lastError()));
    const QString status = window_->panel().cacheStatusLabel()->text();
    QVERIFY2(status.startsWith("Template cache: miss: computed in full (template not registered for these settings"),
             qPrintable(status));
    QVERIFY2(window_->panel().timingLabel()->text().contains("computed in full, no template reused"),
             qPrintable(window_->panel().timingLabel()->text()));
    QVERIFY(window_->strip().current()->summary.contains("computed in full"));
  }

  void acceptAppliesTheVariationWithUndo() {
    const Image before = window_->document().image();
    const QImage chosen = window_->strip().current()->image;
    QTest::mouseClick(window_->strip().acceptButton(), Qt::LeftButton);
    QCOMPARE(window_->strip().count(), 0);
    QVERIFY(window_->document().image().pixels != before.pixels);
    window_->document().undoStack().undo();
    QVERIFY(window_->document().image().pixels == before.pixels);
    window_->document().undoStack().redo();
    QVERIFY(window_->document().image().pixels == from_qimage(chosen).pixels);
  }

  void cancelStopsARunMidway() {
    configure(/*steps=*/200, /*variations=*/1, /*capture=*/false);
    window_->document().clearMask();
    window_->document().fillRectangle(QRect(20, 20, 90, 60), true);  // 200 steps: not captured, in full
    QSignalSpy finished(&window_->controller(), &GenerationController::finished);
    QSignalSpy progress(&window_->controller(), &GenerationController::progressChanged);
    EventLoopLatency latency;
    window_->generate();
    // Wait until denoising has started (a step counted), then press Cancel.
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
          for (const QList<QVariant>& event : progress)
            if (event.at(0).toInt() >= 2) return true;
          return false;
        }(),
        120000);
    QVERIFY(window_->panel().cancelButton()->isVisibleTo(&window_->panel()));
    QElapsedTimer cancel_clock;
    cancel_clock.start();
    QTest::mouseClick(window_->panel().cancelButton(), Qt::LeftButton);
    QVERIFY(finished.wait(60000));
    qInfo("cancel took %lld ms; event loop worst gap %lld ms", cancel_clock.elapsed(), latency.worstMs());
    QCOMPARE(finished.first().at(0).toBool(), true);  // cancelled, not finished
    QCOMPARE(window_->strip().count(), 0);
    QVERIFY(window_->lastError().isEmpty());
    int last_step = 0;
    for (const QList<QVariant>& event : progress) last_step = std::max(last_step, event.at(0).toInt());
    QVERIFY2(last_step < 200, "the run stopped before its last step");
    QVERIFY2(latency.worstMs() < kWorstGapBoundMs, qPrintable(QString::number(latency.worstMs())));
    QVERIFY(!window_->controller().busy());
  }

  void modelDefaultStepsRunTheModelsRecommendation() {
    configure(/*steps=*/0, /*variations=*/1, /*capture=*/false);
    QCOMPARE(window_->panel().settings().steps, 0);  // "Model default", not clamped to 1
    window_->document().clearMask();
    window_->document().fillRectangle(QRect(60, 60, 48, 48), true);
    QSignalSpy finished(&window_->controller(), &GenerationController::finished);
    QSignalSpy progress(&window_->controller(), &GenerationController::progressChanged);
    window_->generate();
    QVERIFY(finished.wait(240000));
    QVERIFY2(window_->lastError().isEmpty(), qPrintable(window_->lastError()));
    // The bundled model recommends one step (its model_index.json); the engine reports it.
    const int recommended =
        flashps::sdk::Editor::open(FLASHPS_SOURCE_DIR "/samples/models/flashps-fill-small").info().default_steps;
    int last_total = -1;
    for (const QList<QVariant>& event : progress)
      if (event.at(1).toInt() > 0) last_total = event.at(1).toInt();
    QCOMPARE(last_total, recommended);
    window_->strip().clear();
  }

  void aBadModelFolderEndsInTheSdkMessage() {
    configure(/*steps=*/4, /*variations=*/1, /*capture=*/false);
    GenerationSettings settings = window_->panel().settings();
    settings.model_dir = "/nonexistent/model-folder";
    window_->panel().setSettings(settings);
    QSignalSpy finished(&window_->controller(), &GenerationController::finished);
    QSignalSpy errors(window_.get(), &MainWindow::errorShown);
    window_->generate();
    QVERIFY(finished.wait(60000));
    QCOMPARE(errors.count(), 1);
    QVERIFY2(window_->lastError().contains("/nonexistent/model-folder"), qPrintable(window_->lastError()));
    // Choosing the folder already tried to load it: the panel says why it cannot (no second dialog).
    QTRY_VERIFY2(window_->panel().modelStatusLabel()->text().contains("/nonexistent/model-folder"),
                 qPrintable(window_->panel().modelStatusLabel()->text()));
    QVERIFY(!window_->controller().busy());
    QVERIFY(window_->panel().generateButton()->isEnabled());
  }
};

QTEST_MAIN(GenerationTest)
#include "test_generation.moc"
