// The Filters menu through the app's own code: it lists the plugins the host found (the first-party
// ones under "Generative") and those that could not be loaded; the parameter dialog is generated
// from a plugin's specs; a run puts its result in the staging strip; a crashing third-party plugin
// ends in a warning while the window keeps working; Cancel stops a run. The third-party plugins are
// the plugin tests' (<build>/tests/test_plugins/<group>), run by the build's runner
// (<build>/libexec/flashps); this test lives in <build>/desktop_app. With FLASHPS_SCREENSHOT_DIR set
// it also writes filters-menu.png and filters-dialog.png there (the README's pictures).
#include <QAction>
#include <QCoreApplication>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPainter>
#include <QPlainTextEdit>
#include <QProgressDialog>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>
#include <map>
#include <memory>
#include <string>

#include <flashps/plugin_host.hpp>

#include "canvas_view.h"
#include "document.h"
#include "filter_menu.h"
#include "main_window.h"
#include "paint_test_support.h"
#include "plugin_dialog.h"
#include "plugin_runner_task.h"
#include "staging_strip.h"

using namespace flashps_paint;
using namespace flashps_paint::test;
namespace fp = flashps::plugins;

class FiltersTest : public QObject {
  Q_OBJECT
  QTemporaryDir store_dir_;
  std::unique_ptr<MainWindow> window_;
  QStringList asked_;                                  // plugins whose parameters were asked for
  std::map<std::string, std::string> shown_, answer_;  // what the dialog showed, what the user gave

  // Chooses `name` in the Filters menu as the user would (the menu refreshes when it opens).
  bool choose(const char* name) {
    window_->filterMenu().refresh();
    QAction* action = window_->filterMenu().actionFor(name);
    if (!action || !action->isEnabled()) return false;
    action->trigger();
    return true;
  }

  // Runs `name` to its end; false when it did not finish in time.
  bool runToEnd(const char* name, bool* cancelled = nullptr) {
    QSignalSpy finished(&window_->pluginRunner(), &PluginRunnerTask::finished);
    if (!choose(name) || !finished.wait(60000)) return false;
    if (cancelled) *cancelled = finished.first().at(0).toBool();
    return true;
  }

  void setTestImage() {
    window_->document().setImage(gradient_image(64, 48, 7));
    window_->document().fillRectangle(QRect(8, 8, 16, 16), true);
    window_->strip().clear();
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(isolate_settings_and_store(store_dir_));
    window_ = std::make_unique<MainWindow>();  // opens the default plugin host: the build's filters
    UserPrompts prompts;
    prompts.confirm_discard = [](const QString&) { return DiscardChoice::discard; };
    prompts.save_path = [](const QString&, const QString&, const QString&) { return QString(); };
    prompts.filter_parameters = [this](const fp::PluginInfo& plugin, std::map<std::string, std::string>& values) {
      asked_ << QString::fromStdString(plugin.name);
      shown_ = values;
      values = answer_;
      return true;
    };
    window_->setUserPrompts(prompts);
    window_->resize(1280, 800);
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
  }

  void cleanupTestCase() { window_.reset(); }

  void menuListsTheFirstPartyPluginsUnderGenerative() {
    FilterMenu& menu = window_->filterMenu();
    // In the menu bar, just before View.
    const QList<QAction*> bar = window_->menuBar()->actions();
    const int at = int(bar.indexOf(menu.menuAction()));
    QVERIFY(at >= 0 && at + 1 < bar.size());
    QCOMPARE(bar.at(at + 1)->text(), QString("&View"));
    QMenu* generative = menu.submenu("Generative");
    QVERIFY(generative);
    const char* names[] = {"flashps.generative-fill", "flashps.remove-object", "flashps.expand-canvas",
                           "flashps.variations"};
    for (const char* name : names) {
      QAction* action = menu.actionFor(name);
      QVERIFY2(action && generative->actions().contains(action), name);
      const fp::PluginInfo* plugin = menu.host()->find(name);
      QVERIFY(plugin && plugin->first_party && plugin->in_process);
      QCOMPARE(action->statusTip(), QString::fromStdString(plugin->description));
    }
    // No image: nothing can run, and each action says why.
    QVERIFY(window_->document().empty());
    menu.refresh();
    QAction* fill = menu.actionFor("flashps.generative-fill");
    QVERIFY(!fill->isEnabled());
    QVERIFY2(fill->toolTip().contains("Open an image"), qPrintable(fill->toolTip()));
    // An image without a selection: the plugins that need one wait for it; with one, all run.
    window_->document().setImage(gradient_image(64, 48, 7));
    menu.refresh();
    QVERIFY(menu.host()->find("flashps.generative-fill")->needs_mask);
    for (const char* name : names) {
      QCOMPARE(menu.actionFor(name)->isEnabled(), !menu.host()->find(name)->needs_mask);
      if (!menu.actionFor(name)->isEnabled()) QVERIFY(menu.actionFor(name)->toolTip().contains("selection"));
    }
    window_->document().fillRectangle(QRect(8, 8, 16, 16), true);
    menu.refresh();
    for (const char* name : names) QVERIFY2(menu.actionFor(name)->isEnabled(), name);
    QCOMPARE(fill->toolTip(), QString::fromStdString(menu.host()->find("flashps.generative-fill")->description));
  }

  void dialogIsGeneratedFromTheParameterSpecs() {
    const fp::PluginInfo* plugin = window_->filterMenu().host()->find("flashps.generative-fill");
    QVERIFY(plugin);
    PluginDialog dialog(*plugin);
    auto* steps = qobject_cast<QSpinBox*>(dialog.editor("steps"));
    QVERIFY(steps);
    QCOMPARE(steps->minimum(), 0);
    QCOMPARE(steps->maximum(), 100);
    QVERIFY(qobject_cast<QDoubleSpinBox*>(dialog.editor("strength")));
    auto* prompt = qobject_cast<QPlainTextEdit*>(dialog.editor("prompt"));
    QVERIFY(prompt);
    // Labels and tooltips from the specs.
    bool labelled = false;
    for (const QLabel* label : dialog.findChildren<QLabel*>())
      labelled |= label->buddy() == steps && label->text() == "Steps:";
    QVERIFY(labelled);
    QVERIFY(!steps->toolTip().isEmpty());
    // Values as --param takes them: first the defaults, as the host gives them.
    std::map<std::string, std::string> values = dialog.values();
    QCOMPARE(values.size(), plugin->parameters.size());
    for (const fp::ParameterSpec& spec : plugin->parameters) QCOMPARE(values.at(spec.key), spec.default_value());
    steps->setValue(12);
    prompt->setPlainText("a ripe fig");
    values = dialog.values();
    QCOMPARE(values.at("steps"), std::string("12"));
    QCOMPARE(values.at("prompt"), std::string("a ripe fig"));
    dialog.restoreDefaults();
    QCOMPARE(dialog.values().at("steps"), std::string("0"));
    // A run's values come back the next time.
    PluginDialog again(*plugin, {{"steps", "7"}, {"strength", "0.5"}});
    QCOMPARE(qobject_cast<QSpinBox*>(again.editor("steps"))->value(), 7);
    QCOMPARE(again.values().at("strength"), std::string("0.5"));
  }

  void screenshots() {
    const QString dir = qEnvironmentVariable("FLASHPS_SCREENSHOT_DIR");
    if (dir.isEmpty()) QSKIP("FLASHPS_SCREENSHOT_DIR is not set: no screenshots");
    QVERIFY(QDir().mkpath(dir));
    window_->document().setImage(to_rgb(Image::load(FLASHPS_SOURCE_DIR "/samples/images/fig.jpg")));
    window_->document().fillRectangle(QRect(190, 190, 150, 110), true);
    window_->canvas().fitToWindow();
    // Offscreen, menus are windows of their own: grab them and lay them over the window's grab.
    FilterMenu& menu = window_->filterMenu();
    QMenuBar* bar = window_->menuBar();
    menu.popup(bar->mapToGlobal(bar->actionGeometry(menu.menuAction()).bottomLeft()));
    QVERIFY(QTest::qWaitForWindowExposed(&menu));
    QMenu* generative = menu.submenu("Generative");
    QVERIFY(generative);
    menu.setActiveAction(generative->menuAction());  // opens the submenu, as hovering does
    if (!generative->isVisible())
      generative->popup(menu.mapToGlobal(menu.actionGeometry(generative->menuAction()).topRight()));
    QVERIFY(QTest::qWaitForWindowExposed(generative));
    generative->setActiveAction(menu.actionFor("flashps.generative-fill"));
    QTest::qWait(50);
    QImage shot = window_->grab().toImage();
    {
      QPainter painter(&shot);
      for (QMenu* popup : {static_cast<QMenu*>(&menu), generative})
        painter.drawPixmap(window_->mapFromGlobal(popup->pos()), popup->grab());
    }
    generative->hide();
    menu.hide();
    QVERIFY2(shot.save(dir + "/filters-menu.png"), qPrintable(dir));

    const fp::PluginInfo* plugin = menu.host()->find("flashps.generative-fill");
    QVERIFY(plugin);
    PluginDialog dialog(*plugin, {{"prompt", "a ripe fig on a blue plate"}, {"steps", "8"}}, window_.get());
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    QVERIFY(dialog.grab().save(dir + "/filters-dialog.png"));
    dialog.close();
    qInfo("wrote %s/filters-menu.png and filters-dialog.png", qPrintable(dir));
  }

  void testPluginsAndLoadProblemsAreListed() {
    const QString root = QDir::cleanPath(QCoreApplication::applicationDirPath() + "/..");
    fp::HostOptions options;
    for (const char* group : {"good", "faulty", "bad"})
      options.search_path.push_back((root + "/tests/test_plugins/" + group).toStdString());
    options.runner_path = (root + "/libexec/flashps/flashps-plugin-runner").toStdString();
    options.idle_timeout_seconds = 30;
    QVERIFY2(QFileInfo(QString::fromStdString(options.runner_path)).isExecutable(), options.runner_path.c_str());
    FilterMenu& menu = window_->filterMenu();
    menu.openHost(options);
    QMenu* test = menu.submenu("Test");
    QVERIFY(test);
    for (const char* name : {"test.invert", "test.segfault"}) {
      QVERIFY2(menu.actionFor(name) && test->actions().contains(menu.actionFor(name)), name);
      QVERIFY(!menu.host()->find(name)->in_process);  // third-party: in a runner
    }
    // The bad group's libraries are refused, and the menu says how many and why.
    const size_t problems = menu.host()->problems().size();
    QVERIFY(problems > 1);
    QVERIFY(menu.problemsAction() && !menu.problemsAction()->isEnabled());
    QCOMPARE(menu.problemsAction()->text(), QString("%1 plugins could not be loaded").arg(problems));
    QVERIFY(menu.problemsAction()->toolTip().contains("test_no_entry.so"));
  }

  void aRunPutsItsResultInTheStagingStrip() {
    setTestImage();
    answer_ = {{"delay_ms", "0"}};
    asked_.clear();
    bool cancelled = true;
    QVERIFY(runToEnd("test.invert", &cancelled));
    QVERIFY(!cancelled);
    QVERIFY2(window_->lastError().isEmpty(), qPrintable(window_->lastError()));
    QCOMPARE(asked_, QStringList{"test.invert"});
    QCOMPARE(window_->strip().count(), 1);
    const Variation* result = window_->strip().current();
    QVERIFY2(result->summary.startsWith("Invert (test) · ") && result->summary.endsWith(" s"),
             qPrintable(result->summary));
    // Inverted inside the selection (the gradient has red = x, green = y, blue = 7), kept outside.
    QCOMPARE(result->image.size(), QSize(64, 48));
    QCOMPARE(QColor(result->image.pixel(10, 12)), QColor(255 - 10, 255 - 12, 255 - 7));
    QCOMPARE(QColor(result->image.pixel(40, 30)), QColor(40, 30, 7));
  }

  void aCrashIsReportedAndTheWindowKeepsWorking() {
    setTestImage();
    QSignalSpy errors(window_.get(), &MainWindow::errorShown);
    asked_.clear();
    QVERIFY(runToEnd("test.segfault"));
    QVERIFY(asked_.isEmpty());  // no parameters: no dialog
    QCOMPARE(errors.count(), 1);
    const QString message = errors.first().at(0).toString();
    QVERIFY2(message.contains("test.segfault") && message.contains("crashed"), qPrintable(message));
    QCOMPARE(window_->strip().count(), 0);
    // A warning that does not block (window-modal, opened): close it as the user would.
    QMessageBox* box = window_->findChild<QMessageBox*>();
    QVERIFY(box && box->isVisible());
    QCOMPARE(box->icon(), QMessageBox::Warning);
    QVERIFY2(box->windowTitle().contains("crashed"), qPrintable(box->windowTitle()));
    box->close();
    // The window goes on: the next run works, and its dialog shows the last run's values.
    QVERIFY(runToEnd("test.invert"));
    QCOMPARE(errors.count(), 1);
    QCOMPARE(window_->strip().count(), 1);
    QCOMPARE(shown_.at("delay_ms"), std::string("0"));
  }

  void cancelStopsARun() {
    setTestImage();
    answer_ = {{"delay_ms", "300"}};  // three bands of 16 rows, 300 ms each
    QSignalSpy errors(window_.get(), &MainWindow::errorShown);
    QSignalSpy progress(&window_->pluginRunner(), &PluginRunnerTask::progressChanged);
    QSignalSpy finished(&window_->pluginRunner(), &PluginRunnerTask::finished);
    QVERIFY(choose("test.invert"));
    QVERIFY(window_->pluginRunner().busy());
    // Busy: the menu lets no second filter start.
    window_->filterMenu().refresh();
    QVERIFY(!window_->filterMenu().actionFor("test.invert")->isEnabled());
    QVERIFY(window_->filterProgress());
    QVERIFY(progress.wait(10000));  // word from the runner: the run is under way
    auto* cancel = window_->filterProgress()->findChild<QPushButton*>();
    QVERIFY(cancel);
    cancel->click();
    QVERIFY(finished.wait(30000));
    QCOMPARE(finished.first().at(0).toBool(), true);
    QCOMPARE(errors.count(), 0);
    QCOMPARE(window_->strip().count(), 0);
    QVERIFY(!window_->pluginRunner().busy());
  }
};

QTEST_MAIN(FiltersTest)
#include "test_filters.moc"
