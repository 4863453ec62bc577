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
#include <QScrollArea>
#include <QSlider>
#include <QSpinBox>
#include <QStatusBar>
#include <QToolBar>
#include <QVBoxLayout>

#include "canvas_view.h"
#include "document.h"
#include "generation_controller.h"
#include "generation_panel.h"
#include "image_convert.h"
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

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle(tr("FlashPS Paint"));
  document_ = new Document(this);
  controller_ = new GenerationController(this);

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
  statusBar()->addPermanentWidget(brush_label_);
  statusBar()->addPermanentWidget(zoom_label_);

  buildActions();
  connectParts();
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
  add_action(file, tr("Load &mask…"), QKeySequence(), this, &MainWindow::loadMask);
  add_action(file, tr("&Save image…"), QKeySequence::Save, this, &MainWindow::saveImage);
  add_action(file, tr("Save mas&k…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S), this, &MainWindow::saveMask);
  file->addSeparator();
  add_action(file, tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

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

bool MainWindow::openImage(const QString& path) {
  try {
    document_->open(path);
  } catch (const std::exception& error) {
    showError(tr("Cannot open %1").arg(QFileInfo(path).fileName()), QString::fromUtf8(error.what()));
    return false;
  }
  last_folder_ = QFileInfo(path).absolutePath();
  strip_->clear();
  setWindowTitle(tr("%1 — FlashPS Paint").arg(QFileInfo(path).fileName()));
  return true;
}

void MainWindow::generate() {
  if (document_->empty()) return showError(tr("Nothing to edit"), tr("Open an image first."));
  if (flashps::sdk::mask::bounds(document_->mask()).empty())
    return showError(tr("Nothing to regenerate"), tr("Paint a mask over the region to regenerate first."));
  controller_->generate(document_->image(), document_->mask(), panel_->settings());
}

void MainWindow::showError(const QString& what, const QString& message) {
  last_error_ = message;
  Q_EMIT errorShown(message);
  // Window-modal but not blocking: the event loop (and a running generation) goes on.
  auto* box = new QMessageBox(QMessageBox::Critical, what, message, QMessageBox::Ok, this);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
}

void MainWindow::saveImage() {
  if (document_->empty()) return;
  const QString path = QFileDialog::getSaveFileName(this, tr("Save image"), last_folder_, tr("Images (*.png *.jpg)"));
  if (path.isEmpty()) return;
  try {
    document_->image().save(path.toStdString());
  } catch (const std::exception& error) {
    showError(tr("Cannot save the image"), QString::fromUtf8(error.what()));
  }
}

void MainWindow::saveMask() {
  if (document_->empty()) return;
  const QString path = QFileDialog::getSaveFileName(this, tr("Save mask"), last_folder_, tr("PNG (*.png)"));
  if (path.isEmpty()) return;
  try {
    document_->mask().save(path.toStdString());
  } catch (const std::exception& error) {
    showError(tr("Cannot save the mask"), QString::fromUtf8(error.what()));
  }
}

void MainWindow::loadMask() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Load mask"), last_folder_, tr("Images (*.png *.jpg *.jpeg)"));
  if (path.isEmpty()) return;
  try {
    document_->loadMask(path);
  } catch (const std::exception& error) {
    showError(tr("Cannot load the mask"), QString::fromUtf8(error.what()));
  }
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
  controller_->cancel();
  currentSettings().save();
  event->accept();
}

}  // namespace flashps_paint
