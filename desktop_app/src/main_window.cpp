#include "main_window.h"

#include <QActionGroup>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressDialog>
#include <QPushButton>
#include <QScrollArea>
#include <QSlider>
#include <QSpinBox>
#include <QStatusBar>
#include <QToolBar>
#include <QVBoxLayout>
#include <algorithm>

#include "canvas_view.h"
#include "document.h"
#include "filter_menu.h"
#include "generation_controller.h"
#include "generation_panel.h"
#include "image_convert.h"
#include "image_loader.h"
#include "plugin_runner_task.h"
#include "staging_strip.h"

namespace flashps_paint {

namespace {
template <typename Receiver, typename Slot>
QAction* add_action(QMenu* menu, const QString& text, const QKeySequence& key, Receiver* receiver, Slot slot) {
  QAction* action = menu->addAction(text);
  action->setShortcut(key);
  QObject::connect(action, &QAction::triggered, receiver, slot);
  return action;
}
}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent), prompts_(UserPrompts::dialogs(this)) {
  setWindowTitle(tr("FlashPS Paint[*]"));
  document_ = new Document(this);
  controller_ = new GenerationController(this);
  image_loader_ = new ImageLoader(this);
  mask_loader_ = new ImageLoader(this);
  plugin_runner_ = new PluginRunnerTask(this);
  filter_menu_ = new FilterMenu(
      [this] {
        const bool image = !document_->empty();
        return FilterContext{image, image && !flashps::sdk::mask::bounds(document_->mask()).empty(),
                             plugin_runner_->busy()};
      },
      this);
  filter_menu_->openHost();  // first-party plugins load here; third-party ones describe themselves in a runner

  auto* centre = new QWidget;
  auto* layout = new QVBoxLayout(centre);
  layout->setContentsMargins(0, 0, 0, 0);
  canvas_ = new CanvasView(*document_);
  strip_ = new StagingStrip;
  layout->addWidget(canvas_, 1);
  layout->addWidget(strip_);
  setCentralWidget(centre);

  panel_ = new GenerationPanel;
  auto* scroll = new QScrollArea;
  scroll->setWidget(panel_);
  scroll->setWidgetResizable(true);
  auto* dock = new QDockWidget(tr("Generative fill"));
  dock->setObjectName("generation");
  dock->setWidget(scroll);
  dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  addDockWidget(Qt::RightDockWidgetArea, dock);

  zoom_label_ = new QLabel;
  brush_label_ = new QLabel;
  loading_label_ = new QLabel;
  cancel_loading_ = new QPushButton(tr("Cancel loading"));
  loading_label_->setVisible(false);
  cancel_loading_->setVisible(false);
  statusBar()->addWidget(loading_label_);
  statusBar()->addWidget(cancel_loading_);
  statusBar()->addPermanentWidget(brush_label_);
  statusBar()->addPermanentWidget(zoom_label_);

  buildActions();
  connectParts();
  connectFilters();
  applySettings(AppSettings::load());
}

MainWindow::~MainWindow() = default;

void MainWindow::buildActions() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  add_action(file, tr("&Open image…"), QKeySequence::Open, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open image"), last_folder_,
                                                      tr("Images (*.png *.jpg *.jpeg)"));
    if (!path.isEmpty()) openImage(path);
  });
  add_action(file, tr("Load &mask…"), QKeySequence(), this, &MainWindow::chooseMask);
  add_action(file, tr("&Save image…"), QKeySequence::Save, this, &MainWindow::saveImage);
  add_action(file, tr("Save mas&k…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S), this, &MainWindow::saveMask);
  file->addSeparator();
  // Ctrl+Q spelled out: QKeySequence::Quit is empty on some platforms (offscreen, some themes).
  add_action(file, tr("&Quit"), QKeySequence(Qt::CTRL | Qt::Key_Q), this, &QWidget::close);

  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  QAction* undo = document_->undoStack().createUndoAction(this, tr("&Undo"));
  undo->setShortcut(QKeySequence::Undo);
  QAction* redo = document_->undoStack().createRedoAction(this, tr("&Redo"));
  redo->setShortcuts({QKeySequence::Redo, QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z)});
  edit->addAction(undo);
  edit->addAction(redo);

  QMenu* mask = menuBar()->addMenu(tr("&Mask"));
  QToolBar* tools = addToolBar(tr("Tools"));
  tools->setObjectName("tools");
  auto* group = new QActionGroup(this);
  const struct {
    QString name;
    Tool tool;
    QKeySequence key;
  } tool_list[] = {{tr("Brush"), Tool::brush, QKeySequence(Qt::Key_B)},
                   {tr("Eraser"), Tool::eraser, QKeySequence(Qt::Key_E)},
                   {tr("Rectangle"), Tool::rectangle, QKeySequence(Qt::Key_M)},
                   {tr("Lasso"), Tool::lasso, QKeySequence(Qt::Key_L)}};
  for (const auto& entry : tool_list) {
    QAction* action = tools->addAction(entry.name);
    action->setCheckable(true);
    action->setShortcut(entry.key);
    action->setToolTip(tr("%1 (%2)").arg(entry.name, entry.key.toString()));
    action->setChecked(entry.tool == Tool::brush);
    group->addAction(action);
    mask->addAction(action);
    const Tool tool = entry.tool;
    connect(action, &QAction::triggered, this, [this, tool] { canvas_->setTool(tool); });
  }
  tools->addSeparator();
  auto* size = new QSpinBox;
  size->setRange(1, 1000);
  size->setSuffix(tr(" px"));
  size->setToolTip(tr("Brush size ([ and ], or Alt+drag)"));
  auto* hardness = new QSlider(Qt::Horizontal);
  hardness->setRange(0, 100);
  hardness->setMaximumWidth(100);
  hardness->setToolTip(tr("Brush hardness (Alt+drag up/down)"));
  tools->addWidget(new QLabel(tr(" Size ")));
  tools->addWidget(size);
  tools->addWidget(new QLabel(tr(" Hardness ")));
  tools->addWidget(hardness);
  connect(size, &QSpinBox::valueChanged, this, [this](int value) {
    if (int(canvas_->brush().diameter + 0.5) != value) canvas_->setBrushSize(value);
  });
  connect(hardness, &QSlider::valueChanged, this, [this](int value) {
    if (int(canvas_->brush().hardness * 100 + 0.5) != value) canvas_->setBrushHardness(value / 100.0);
  });
  connect(canvas_, &CanvasView::brushChanged, this, [this, size, hardness](double diameter, double hard) {
    const QSignalBlocker block_size(size), block_hardness(hardness);
    size->setValue(int(diameter + 0.5));
    hardness->setValue(int(hard * 100 + 0.5));
    brush_label_->setText(tr("brush %1 px, hardness %2%").arg(int(diameter + 0.5)).arg(int(hard * 100 + 0.5)));
  });
  tools->addSeparator();
  const struct {
    QString name;
    QKeySequence key;
    void (Document::*edit)();
  } mask_edits[] = {{tr("Invert"), QKeySequence(Qt::CTRL | Qt::Key_I), &Document::invertMask},
                    {tr("Clear"), QKeySequence(Qt::Key_Delete), &Document::clearMask},
                    {tr("Fill"), QKeySequence(Qt::SHIFT | Qt::Key_Backspace), &Document::fillMask}};
  mask->addSeparator();
  for (const auto& entry : mask_edits) {
    QAction* action = tools->addAction(entry.name);
    action->setShortcut(entry.key);
    action->setToolTip(tr("%1 mask (%2)").arg(entry.name, entry.key.toString()));
    mask->addAction(action);
    connect(action, &QAction::triggered, document_, entry.edit);
  }
  tools->addSeparator();
  tools->addAction(undo);
  tools->addAction(redo);

  menuBar()->addMenu(filter_menu_);  // where image editors keep filters: before View
  QMenu* view = menuBar()->addMenu(tr("&View"));
  add_action(view, tr("&Fit to window"), QKeySequence(Qt::CTRL | Qt::Key_0), canvas_, &CanvasView::fitToWindow);
  add_action(view, tr("&100%"), QKeySequence(Qt::CTRL | Qt::Key_1), this, [this] { canvas_->setZoom(1.0); });
  add_action(view, tr("Zoom &in"), QKeySequence::ZoomIn, this, [this] { canvas_->setZoom(canvas_->zoom() * 1.25); });
  add_action(view, tr("Zoom &out"), QKeySequence::ZoomOut, this, [this] { canvas_->setZoom(canvas_->zoom() / 1.25); });
}

void MainWindow::connectParts() {
  connect(canvas_, &CanvasView::zoomChanged, this,
          [this](double scale) { zoom_label_->setText(tr("%1%").arg(int(scale * 100 + 0.5))); });
  connect(canvas_, &CanvasView::filesDropped, this, [this](const QStringList& paths) { openImage(paths.front()); });
  connect(cancel_loading_, &QPushButton::clicked, this, &MainWindow::cancelLoading);
  connect(image_loader_, &ImageLoader::loadingChanged, this, &MainWindow::showLoading);
  connect(mask_loader_, &ImageLoader::loadingChanged, this, &MainWindow::showLoading);
  connect(&document_->undoStack(), &QUndoStack::indexChanged, this, &MainWindow::updateModified);

  connect(panel_, &GenerationPanel::generateRequested, this, &MainWindow::generate);
  connect(panel_, &GenerationPanel::cancelRequested, controller_, &GenerationController::cancel);
  connect(panel_, &GenerationPanel::maskPreviewChanged, canvas_, &CanvasView::setMaskPreview);
  connect(panel_, &GenerationPanel::overlayChanged, canvas_, &CanvasView::setOverlay);
  connect(panel_, &GenerationPanel::modelChanged, controller_, &GenerationController::prepareModel);
  connect(controller_, &GenerationController::modelReady, panel_, &GenerationPanel::setModel);
  connect(controller_, &GenerationController::modelFailed, panel_, &GenerationPanel::setModelFailed);

  connect(controller_, &GenerationController::busyChanged, panel_, &GenerationPanel::setBusy);
  connect(controller_, &GenerationController::progressChanged, panel_, &GenerationPanel::setProgress);
  connect(controller_, &GenerationController::cacheStatusChanged, panel_, &GenerationPanel::setCacheStatus);
  connect(controller_, &GenerationController::timingChanged, panel_, &GenerationPanel::setTiming);
  connect(controller_, &GenerationController::storeOpened, panel_, [this](const QString& directory) {
    panel_->setCacheStatus(directory.isEmpty() ? tr("no store, captures kept in memory")
                                               : tr("captures stored in %1").arg(directory));
  });
  connect(controller_, &GenerationController::variationReady, strip_, &StagingStrip::addVariation);
  connect(controller_, &GenerationController::failed, this,
          [this](const QString& message) { showError(tr("Generation failed"), message); });
  connect(controller_, &GenerationController::notice, this,
          [this](const QString& message) { statusBar()->showMessage(message, 8000); });
  connect(controller_, &GenerationController::finished, this, [this](bool cancelled) {
    statusBar()->showMessage(cancelled ? tr("Generation cancelled") : tr("Generation finished"), 5000);
  });

  connect(strip_, &StagingStrip::currentChanged, canvas_, &CanvasView::setStagedImage);
  connect(strip_, &StagingStrip::showOriginalToggled, canvas_, &CanvasView::setShowOriginal);
  connect(strip_, &StagingStrip::acceptRequested, this, [this](const QImage& image) {
    document_->replaceImage(from_qimage(image), tr("Accept variation"));
    strip_->clear();
  });
}

void MainWindow::connectFilters() {
  connect(filter_menu_, &FilterMenu::pluginChosen, this, &MainWindow::runFilter);
  connect(plugin_runner_, &PluginRunnerTask::progressChanged, this, [this](int done, int total, const QString& stage) {
    if (!filter_progress_ || filter_progress_->wasCanceled()) return;  // else setValue() shows it again
    filter_progress_->setMaximum(std::max(total, 0));  // 0: busy indicator, the plugin gave no total
    filter_progress_->setValue(std::clamp(done, 0, std::max(total, 0)));
    if (!stage.isEmpty())
      filter_progress_->setLabelText(total > 0 ? tr("%1: %2 of %3").arg(stage).arg(done).arg(total) : stage);
  });
  connect(plugin_runner_, &PluginRunnerTask::resultReady, strip_, &StagingStrip::addVariation);
  connect(plugin_runner_, &PluginRunnerTask::notice, this,
          [this](const QString& message) { statusBar()->showMessage(message, 8000); });
  connect(plugin_runner_, &PluginRunnerTask::failed, this,
          [this](const QString& title, const QString& message) { showError(title, message, true); });
  connect(plugin_runner_, &PluginRunnerTask::finished, this, [this](bool cancelled) {
    if (filter_progress_) {
      filter_progress_->disconnect(plugin_runner_);
      filter_progress_->deleteLater();
      filter_progress_ = nullptr;
    }
    if (cancelled) statusBar()->showMessage(tr("Filter cancelled"), 5000);
  });
}

void MainWindow::runFilter(const QString& name) {
  const FilterMenu::Host host = filter_menu_->host();  // the plugin's info lives as long as this
  const flashps::plugins::PluginInfo* plugin = host->find(name.toStdString());
  if (!plugin || plugin_runner_->busy()) return;
  const QString title = plugin_title(*plugin);
  if (document_->empty()) return showError(title, tr("Open an image first."));
  Image mask = document_->mask();
  if (flashps::sdk::mask::bounds(mask).empty()) mask = Image();  // nothing selected: no selection
  if (plugin->needs_mask && mask.empty())
    return showError(title, tr("%1 changes the selection only: paint a mask over the region first.").arg(title));
  std::map<std::string, std::string>& values = filter_values_[plugin->name];
  if (!plugin->parameters.empty() && prompts_.filter_parameters && !prompts_.filter_parameters(*plugin, values))
    return;
  plugin_runner_->run(host, *plugin, document_->image(), mask, values);
  showFilterProgress(title);
}

void MainWindow::showFilterProgress(const QString& title) {
  delete filter_progress_;
  // Not modal: a modal QProgressDialog spins the event loop inside setValue(), where the run's
  // finished() could delete it. The menu stays disabled while the filter runs.
  filter_progress_ = new QProgressDialog(tr("Running %1…").arg(title), tr("Cancel"), 0, 0, this);
  filter_progress_->setWindowTitle(title);
  filter_progress_->setAutoReset(false);
  filter_progress_->setMinimumDuration(400);  // quick filters finish without a flash of a dialog
  connect(filter_progress_, &QProgressDialog::canceled, plugin_runner_, &PluginRunnerTask::cancel);
}

bool MainWindow::openImage(const QString& path) {
  if (!confirmDiscardChanges()) return false;
  const QString name = QFileInfo(path).fileName();
  // RGB conversion on the decode thread too: the UI thread only swaps the document's image.
  image_loader_->load(
      path, [](Image loaded) { return to_rgb(loaded); },
      [this, path, name](Image image) {
        document_->setImage(std::move(image));
        last_folder_ = QFileInfo(path).absolutePath();
        document_name_ = name;
        strip_->clear();
        setWindowTitle(tr("%1[*] — FlashPS Paint").arg(name));
        updateModified();
        Q_EMIT imageOpened(path);
      },
      [this, name](const QString& message) { showError(tr("Cannot open %1").arg(name), message); });
  return true;
}

void MainWindow::cancelLoading() {
  image_loader_->cancel();
  mask_loader_->cancel();
}

bool MainWindow::loading() const { return image_loader_->loading() || mask_loader_->loading(); }

void MainWindow::showLoading(bool, const QString& path) {
  const bool busy = loading();
  loading_label_->setText(tr("Loading %1…").arg(QFileInfo(path).fileName()));
  loading_label_->setVisible(busy);
  cancel_loading_->setVisible(busy);
}

void MainWindow::updateModified() { setWindowModified(document_->imageModified() || document_->maskModified()); }

bool MainWindow::confirmDiscardChanges() {
  if (document_->empty()) return true;
  const bool image = document_->imageModified(), mask = document_->maskModified();
  if (!image && !mask) return true;
  const QString what = image && mask ? tr("an accepted variation and mask edits")
                       : image       ? tr("an accepted variation")
                                     : tr("mask edits");
  const QString name = document_name_.isEmpty() ? tr("This image") : document_name_;
  const QString question = tr("%1 has unsaved changes (%2). Save them before they are discarded?").arg(name, what);
  switch (prompts_.confirm_discard(question)) {
    case DiscardChoice::save: return (!image || saveImage()) && (!mask || saveMask());
    case DiscardChoice::discard: return true;
    case DiscardChoice::cancel: break;
  }
  return false;
}

void MainWindow::generate() {
  if (document_->empty()) return showError(tr("Nothing to edit"), tr("Open an image first."));
  if (flashps::sdk::mask::bounds(document_->mask()).empty())
    return showError(tr("Nothing to regenerate"), tr("Paint a mask over the region to regenerate first."));
  controller_->generate(document_->image(), document_->mask(), panel_->settings());
}

void MainWindow::showError(const QString& what, const QString& message, bool warning) {
  last_error_ = message;
  Q_EMIT errorShown(message);
  // Window-modal but not blocking: the event loop (and a running generation) goes on.
  auto* box = new QMessageBox(warning ? QMessageBox::Warning : QMessageBox::Critical, what, message,
                              QMessageBox::Ok, this);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
}

bool MainWindow::saveImage() {
  if (document_->empty()) return false;
  const QString path = prompts_.save_path(tr("Save image"), last_folder_, tr("Images (*.png *.jpg)"));
  if (path.isEmpty()) return false;
  try {
    document_->image().save(path.toStdString());
  } catch (const std::exception& error) {
    showError(tr("Cannot save the image"), QString::fromUtf8(error.what()));
    return false;
  }
  document_->markImageSaved();
  updateModified();
  return true;
}

bool MainWindow::saveMask() {
  if (document_->empty()) return false;
  const QString path = prompts_.save_path(tr("Save mask"), last_folder_, tr("PNG (*.png)"));
  if (path.isEmpty()) return false;
  try {
    document_->mask().save(path.toStdString());
  } catch (const std::exception& error) {
    showError(tr("Cannot save the mask"), QString::fromUtf8(error.what()));
    return false;
  }
  document_->markMaskSaved();
  updateModified();
  return true;
}

void MainWindow::chooseMask() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Load mask"), last_folder_, tr("Images (*.png *.jpg *.jpeg)"));
  if (!path.isEmpty()) loadMask(path);
}

void MainWindow::loadMask(const QString& path) {
  if (document_->empty()) return showError(tr("Cannot load the mask"), tr("Open an image before loading a mask."));
  // Decoded on the loader's thread; Document::setLoadedMask reads it by the SDK's rule at the
  // image's size (the document may change size before the file is decoded).
  mask_loader_->load(
      path, [](Image loaded) { return loaded; },
      [this, path](Image mask) {
        document_->setLoadedMask(mask);
        updateModified();
        Q_EMIT maskLoaded(path);
      },
      [this](const QString& message) { showError(tr("Cannot load the mask"), message); });
}

void MainWindow::applySettings(const AppSettings& settings) {
  canvas_->setBrushSize(settings.brush_size);
  canvas_->setBrushHardness(settings.brush_hardness);
  panel_->setSettings(settings.generation);
  panel_->setOverlay(settings.overlay_colour, settings.overlay_opacity);
  last_folder_ = settings.last_folder;
  if (!settings.window_geometry.isEmpty()) restoreGeometry(settings.window_geometry);
  else resize(1280, 820);
  if (!settings.window_state.isEmpty()) restoreState(settings.window_state);
}

AppSettings MainWindow::currentSettings() const {
  AppSettings settings;
  settings.brush_size = canvas_->brush().diameter;
  settings.brush_hardness = canvas_->brush().hardness;
  settings.overlay_colour = panel_->overlayColour();
  settings.overlay_opacity = panel_->overlayOpacity();
  settings.generation = panel_->settings();
  settings.last_folder = last_folder_;
  settings.window_geometry = saveGeometry();
  settings.window_state = saveState();
  return settings;
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (!confirmDiscardChanges()) return event->ignore();
  cancelLoading();
  controller_->cancel();
  plugin_runner_->cancel();
  currentSettings().save();
  event->accept();
}

}  // namespace flashps_paint
