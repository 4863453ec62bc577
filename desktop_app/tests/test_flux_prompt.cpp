// A Flux Fill folder with text encoders (random weights, written by `flashps-bench dev
// random-model --text-encoders`): the model is described as taking text, the prompt fields
// appear, and generations with a prompt run through the Engine.
#include <QGroupBox>
#include <QLabel>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "document.h"
#include "generation_controller.h"
#include "generation_panel.h"
#include "main_window.h"
#include "staging_strip.h"

using namespace flashps_paint;

class FluxPromptTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void promptsShowAndGenerateWithAFluxFolderThatHasTextEncoders() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings("FlashPS", "flashps-paint").clear();
    QTemporaryDir dir;
    const QString folder = dir.path() + "/flux-text";
    QProcess writer;
    writer.start(FLASHPS_BENCH_PATH, {"dev", "random-model", folder, "--text-encoders", "--max-sequence-length", "16"});
    QVERIFY(writer.waitForFinished(120000));
    QVERIFY2(writer.exitCode() == 0, writer.readAllStandardError().constData());
    qputenv("FLASHPS_CACHE_DIR", (dir.path() + "/store").toLocal8Bit());

    MainWindow window;
    window.resize(1200, 800);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    GenerationSettings settings;
    settings.steps = 2;
    settings.variations = 1;
    settings.prompt = "a red cat on a tree";
    settings.model_dir = folder;
    QSignalSpy models(&window.controller(), &GenerationController::modelReady);
    window.panel().setSettings(settings);
    QTRY_VERIFY_WITH_TIMEOUT(window.panel().promptBox()->isVisibleTo(&window.panel()), 60000);
    QVERIFY(!window.panel().noTextNote()->isVisibleTo(&window.panel()));
    bool described_with_text = false;
    for (const QList<QVariant>& event : models) {
      const auto model = event.at(0).value<ModelSummary>();
      if (model.option == settings.model_dir) described_with_text = model.takes_text;
    }
    QVERIFY(described_with_text);

    Image image(48, 48, 3);
    for (int y = 0; y < 48; ++y)
      for (int x = 0; x < 48; ++x) {
        image.pixels[(size_t(y) * 48 + x) * 3] = uint8_t(5 * x);
        image.pixels[(size_t(y) * 48 + x) * 3 + 1] = uint8_t(5 * y);
      }
    window.document().setImage(image);
    window.document().fillRectangle(QRect(12, 12, 24, 24), true);
    QSignalSpy finished(&window.controller(), &GenerationController::finished);
    window.generate();
    QVERIFY(finished.wait(120000));
    QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));
    QCOMPARE(window.strip().count(), 1);
    QCOMPARE(window.strip().current()->image.size(), QSize(48, 48));
    window.generate();
    QVERIFY(finished.wait(120000));
    QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));
    QCOMPARE(window.strip().count(), 2);
  }
};

QTEST_MAIN(FluxPromptTest)
#include "test_flux_prompt.moc"
