// The app keeps its captures in the shared activation store (FLASHPS_CACHE_DIR, as the CLI), so a
// second app instance hits the template the first captured, and the cache status and timing say
// exactly what ran: a hit names the template reused, a moved mask outside the captured window
// reports a miss computed in full (never "edits now reuse it").
#include <QLabel>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
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

class StoreTest : public QObject {
  Q_OBJECT
  QTemporaryDir store_dir_;
  Image photo_;  // 512x384: larger than the model's 256 px, so edits go through a window around the mask
  std::string captured_hash_;

  std::unique_ptr<MainWindow> openWindow() {
    auto window = std::make_unique<MainWindow>();
    window->resize(1200, 800);
    window->show();
    if (!QTest::qWaitForWindowExposed(window.get())) return nullptr;
    window->document().setImage(photo_);
    GenerationSettings settings;  // the bundled model
    settings.steps = 2;
    settings.variations = 1;
    settings.seed = 7;
    settings.capture_template = true;
    window->panel().setSettings(settings);
    return window;
  }
  static bool generate(MainWindow& window) {
    QSignalSpy finished(&window.controller(), &GenerationController::finished);
    window.generate();
    const bool ok = finished.wait(240000) && !finished.first().at(0).toBool() && window.lastError().isEmpty();
    qInfo("status: %s\ntiming: %s", qPrintable(status(window)), qPrintable(timing(window)));
    return ok;
  }
  static QString status(MainWindow& window) { return window.panel().cacheStatusLabel()->text(); }
  static QString timing(MainWindow& window) { return window.panel().timingLabel()->text(); }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(isolate_settings_and_store(store_dir_));
    const QImage photo = to_qimage(Image::load(FLASHPS_SOURCE_DIR "/samples/images/fig.jpg"));
    photo_ = from_qimage(photo.scaled(512, 384, Qt::IgnoreAspectRatio, Qt::SmoothTransformation));
  }

  void capturesGoToTheStoreInFlashpsCacheDir() {
    auto window = openWindow();
    QVERIFY(window);
    window->document().fillRectangle(QRect(40, 40, 60, 60), true);
    QVERIFY2(generate(*window), qPrintable(window->lastError()));
    // Nothing was captured before: the edit itself missed, then the template was captured.
    QVERIFY2(status(*window).startsWith("Template cache: miss: computed in full"), qPrintable(status(*window)));
    QVERIFY2(status(*window).contains("captured template") && status(*window).contains(store_dir_.path()),
             qPrintable(status(*window)));
    QVERIFY2(!status(*window).contains("now reuse"), qPrintable(status(*window)));
    QVERIFY2(timing(*window).contains("computed in full") && !timing(*window).contains("less compute"),
             qPrintable(timing(*window)));
    QVERIFY(window->strip().current()->summary.contains("computed in full"));
    // The capture is in the store on disk, where `flashps cache ls` sees it.
    flashps::sdk::StoreOptions options;
    options.directory = store_dir_.path().toStdString();
    const auto captures = flashps::sdk::Store::open(options).list();
    QCOMPARE(int(captures.size()), 1);
    captured_hash_ = captures.front().template_hash;
    const QString hash = QString::fromStdString(captured_hash_.substr(0, 8));
    QVERIFY2(status(*window).contains("captured template " + hash), qPrintable(status(*window)));
  }

  void aSecondInstanceHitsTheCapture() {
    QVERIFY(!captured_hash_.empty());
    auto window = openWindow();  // a new controller and engine: only the store is shared
    QVERIFY(window);
    window->document().fillRectangle(QRect(40, 40, 60, 60), true);
    QVERIFY2(generate(*window), qPrintable(window->lastError()));
    const QString hash = QString::fromStdString(captured_hash_.substr(0, 8));
    QVERIFY2(status(*window).startsWith("Template cache: hit: template " + hash), qPrintable(status(*window)));
    QVERIFY2(timing(*window).contains("cache hit") && !timing(*window).contains("computed in full"),
             qPrintable(timing(*window)));
    QVERIFY2(window->strip().current()->summary.contains("cache hit"), qPrintable(window->strip().current()->summary));
  }

  void aMaskMovedOutOfTheCapturedWindowReportsAMiss() {
    auto window = openWindow();
    QVERIFY(window);
    GenerationSettings settings = window->panel().settings();
    settings.capture_template = false;  // keep the status of the edit itself
    window->panel().setSettings(settings);
    window->document().fillRectangle(QRect(420, 300, 60, 60), true);  // the other corner: another window
    QVERIFY2(generate(*window), qPrintable(window->lastError()));
    QVERIFY2(status(*window).startsWith("Template cache: miss: computed in full"), qPrintable(status(*window)));
    QVERIFY2(timing(*window).contains("computed in full, no template reused") && !timing(*window).contains("hit"),
             qPrintable(timing(*window)));
    QVERIFY(window->strip().current()->summary.contains("computed in full"));
  }
};

QTEST_MAIN(StoreTest)
#include "test_store.moc"
