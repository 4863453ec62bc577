// The generation side panel: model, prompts (only for models that take text), seed, steps,
// strength, texture, variations, the mask's grow/feather with a preview toggle, the overlay look,
// Generate / Cancel with a progress bar, and the template cache status with edit timings.
#pragma once
#include <QColor>
#include <QWidget>

#include "generation_controller.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSlider;
class QSpinBox;
class QGroupBox;

namespace flashps_paint {

class GenerationPanel : public QWidget {
  Q_OBJECT
 public:
  explicit GenerationPanel(QWidget* parent = nullptr);

  GenerationSettings settings() const;
  void setSettings(const GenerationSettings& settings);
  void setOverlay(const QColor& colour, double opacity);
  QColor overlayColour() const { return overlay_colour_; }
  double overlayOpacity() const;

  void setBusy(bool busy);
  void setProgress(int done, int total, double seconds_per_step, const QString& stage);
  void setCacheStatus(const QString& status);
  void setTiming(const QString& text);
  // What the controller learnt about the model; ignored unless it is the model chosen now.
  void setModel(const ModelSummary& model);
  void setModelFailed(const QString& model_option, const QString& message);

  QPushButton* generateButton() const { return generate_; }
  QPushButton* cancelButton() const { return cancel_; }
  QLabel* cacheStatusLabel() const { return cache_status_; }
  QLabel* timingLabel() const { return timing_; }
  QGroupBox* promptBox() const { return prompts_; }
  QLabel* noTextNote() const { return no_text_note_; }
  QLabel* modelStatusLabel() const { return model_status_; }

 Q_SIGNALS:
  void generateRequested();
  void cancelRequested();
  void maskPreviewChanged(bool enabled, int grow_pixels, int feather_pixels);
  void overlayChanged(const QColor& colour, double opacity);
  // The model setting changed ("" = the default model): the controller loads it to describe it.
  void modelChanged(const QString& model_option);

 private:
  void updateModelText();
  void chooseModelFolder();
  void chooseModelFile();
  void chooseOverlayColour();
  void emitMaskPreview();

  QLineEdit* model_ = nullptr;
  QLabel* model_status_ = nullptr;
  bool model_described_ = false;  // model_status_ and the prompts describe described_option_
  QString described_option_;
  QGroupBox* prompts_ = nullptr;
  QLabel* no_text_note_ = nullptr;
  QPlainTextEdit* prompt_ = nullptr;
  QLineEdit* negative_prompt_ = nullptr;
  QSpinBox* seed_ = nullptr;
  QCheckBox* random_seed_ = nullptr;
  QSpinBox* steps_ = nullptr;
  QDoubleSpinBox* strength_ = nullptr;
  QSpinBox* variations_ = nullptr;
  QComboBox* texture_ = nullptr;
  QSpinBox* grow_ = nullptr;
  QSpinBox* feather_ = nullptr;
  QCheckBox* preview_ = nullptr;
  QPushButton* overlay_button_ = nullptr;
  QSlider* opacity_ = nullptr;
  QColor overlay_colour_;
  QCheckBox* capture_ = nullptr;
  QPushButton* generate_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* stage_ = nullptr;
  QLabel* cache_status_ = nullptr;
  QLabel* timing_ = nullptr;
};

}  // namespace flashps_paint
