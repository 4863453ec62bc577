// The main window: canvas in the middle, staging strip below it, generation panel at the side,
// mask tools in the toolbar. Wires the document, canvas, controller and panels together;
// every SDK error ends in a dialog with the SDK's message. Files are decoded off the UI thread
// (ImageLoader); closing or opening another image asks before unsaved changes are discarded.
#pragma once
#include <QMainWindow>

#include "app_settings.h"
#include "user_prompts.h"

class QActionGroup;
class QLabel;
class QPushButton;

namespace flashps_paint {

class CanvasView;
class Document;
class GenerationController;
class GenerationPanel;
class ImageLoader;
class StagingStrip;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Starts decoding `path` in the background (imageOpened, or errorShown with the SDK's message,
  // follows); false when the user keeps unsaved changes instead.
  bool openImage(const QString& path);
  void cancelLoading();
  bool loading() const;
  void loadMask(const QString& path);
  void generate();
  // Asks (Save / Discard / Cancel) when the image or mask has unsaved changes; true when they
  // were saved or may be discarded.
  bool confirmDiscardChanges();
  void setUserPrompts(UserPrompts prompts) { prompts_ = std::move(prompts); }

  Document& document() { return *document_; }
  CanvasView& canvas() { return *canvas_; }
  GenerationPanel& panel() { return *panel_; }
  StagingStrip& strip() { return *strip_; }
  GenerationController& controller() { return *controller_; }
  ImageLoader& imageLoader() { return *image_loader_; }
  QPushButton* cancelLoadingButton() const { return cancel_loading_; }
  QString lastError() const { return last_error_; }

 Q_SIGNALS:
  void errorShown(const QString& message);
  void imageOpened(const QString& path);
  void maskLoaded(const QString& path);

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void buildActions();
  void connectParts();
  void showError(const QString& what, const QString& message);
  bool saveImage();  // false when cancelled or failed
  bool saveMask();
  void chooseMask();
  void showLoading(bool loading, const QString& path);
  void updateModified();
  void applySettings(const AppSettings& settings);
  AppSettings currentSettings() const;

  Document* document_ = nullptr;
  CanvasView* canvas_ = nullptr;
  GenerationPanel* panel_ = nullptr;
  StagingStrip* strip_ = nullptr;
  GenerationController* controller_ = nullptr;
  QLabel* zoom_label_ = nullptr;
  QLabel* brush_label_ = nullptr;
  QLabel* loading_label_ = nullptr;
  QPushButton* cancel_loading_ = nullptr;
  ImageLoader* image_loader_ = nullptr;
  ImageLoader* mask_loader_ = nullptr;
  UserPrompts prompts_;
  QString last_error_, last_folder_, document_name_;
};

}  // namespace flashps_paint
