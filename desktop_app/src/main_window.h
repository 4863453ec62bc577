// The main window: canvas in the middle, staging strip below it, generation panel at the side,
// mask tools in the toolbar, filter plugins in the Filters menu. Wires the document, canvas,
// controllers and panels together; every SDK or plugin error ends in a dialog with its message.
// Files are decoded off the UI thread (ImageLoader); closing or opening another image asks before
// unsaved changes are discarded.
#pragma once
#include <QMainWindow>
#include <map>
#include <string>

#include "app_settings.h"
#include "user_prompts.h"

class QActionGroup;
class QLabel;
class QProgressDialog;
class QPushButton;

namespace flashps_paint {

class CanvasView;
class Document;
class FilterMenu;
class GenerationController;
class GenerationPanel;
class ImageLoader;
class PluginRunnerTask;
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
  // Runs filter plugin `name` on the image and its selection, asking for its parameters first
  // (prompts' filter_parameters) when it has any; results go to the staging strip.
  void runFilter(const QString& name);
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
  FilterMenu& filterMenu() { return *filter_menu_; }
  PluginRunnerTask& pluginRunner() { return *plugin_runner_; }
  QProgressDialog* filterProgress() const { return filter_progress_; }  // null unless a filter runs
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
  void connectFilters();
  // A window-modal box that does not block; `warning`: the app goes on normally (a plugin failed).
  void showError(const QString& what, const QString& message, bool warning = false);
  void showFilterProgress(const QString& title);
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
  FilterMenu* filter_menu_ = nullptr;
  PluginRunnerTask* plugin_runner_ = nullptr;
  QProgressDialog* filter_progress_ = nullptr;
  std::map<std::string, std::map<std::string, std::string>> filter_values_;  // each plugin's last values
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
