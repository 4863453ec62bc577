// The main window: canvas in the middle, staging strip below it, generation panel at the side,
// mask tools in the toolbar. Wires the document, canvas, controller and panels together;
// every SDK error ends in a dialog with the SDK's message.
#pragma once
#include <QMainWindow>

#include "app_settings.h"

class QActionGroup;
class QLabel;

namespace flashps_paint {

class CanvasView;
class Document;
class GenerationController;
class GenerationPanel;
class StagingStrip;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  bool openImage(const QString& path);  // false (and a dialog) when the file cannot be read
  void generate();

  Document& document() { return *document_; }
  CanvasView& canvas() { return *canvas_; }
  GenerationPanel& panel() { return *panel_; }
  StagingStrip& strip() { return *strip_; }
  GenerationController& controller() { return *controller_; }
  QString lastError() const { return last_error_; }

 Q_SIGNALS:
  void errorShown(const QString& message);

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void buildActions();
  void connectParts();
  void showError(const QString& what, const QString& message);
  void saveImage();
  void saveMask();
  void loadMask();
  void applySettings(const AppSettings& settings);
  AppSettings currentSettings() const;

  Document* document_ = nullptr;
  CanvasView* canvas_ = nullptr;
  GenerationPanel* panel_ = nullptr;
  StagingStrip* strip_ = nullptr;
  GenerationController* controller_ = nullptr;
  QLabel* zoom_label_ = nullptr;
  QLabel* brush_label_ = nullptr;
  QString last_error_, last_folder_;
};

}  // namespace flashps_paint
