#include "generation_panel.h"

#include <flashps/flashps.h>

#include <QCheckBox>
#include <QColorDialog>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>
#include <QKeySequence>
#include <algorithm>
#include <limits>

namespace flashps_paint {

GenerationPanel::GenerationPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);

  auto* model_box = new QGroupBox(tr("Model"));
  auto* model_layout = new QHBoxLayout(model_box);
  model_ = new QLineEdit;
  model_->setPlaceholderText(tr("default: the bundled flashps-fill-small"));
  auto* browse = new QPushButton(tr("Folder…"));
  auto* browse_file = new QPushButton(tr("File…"));  // single-file .safetensors / .gguf models
  auto* bundled = new QPushButton(tr("Bundled"));
  model_layout->addWidget(model_, 1);
  model_layout->addWidget(browse);
  model_layout->addWidget(browse_file);
  model_layout->addWidget(bundled);
  layout->addWidget(model_box);
  model_status_ = new QLabel;
  model_status_->setWordWrap(true);
  layout->addWidget(model_status_);
  connect(browse, &QPushButton::clicked, this, &GenerationPanel::chooseModelFolder);
  connect(browse_file, &QPushButton::clicked, this, &GenerationPanel::chooseModelFile);
  connect(bundled, &QPushButton::clicked, this, [this] {
    model_->clear();
    updateModelText();
  });
  connect(model_, &QLineEdit::editingFinished, this, &GenerationPanel::updateModelText);

  prompts_ = new QGroupBox(tr("Prompt"));
  auto* prompt_layout = new QFormLayout(prompts_);
  prompt_ = new QPlainTextEdit;
  prompt_->setMaximumHeight(60);
  negative_prompt_ = new QLineEdit;
  prompt_layout->addRow(tr("Prompt"), prompt_);
  prompt_layout->addRow(tr("Negative"), negative_prompt_);
  layout->addWidget(prompts_);
  no_text_note_ = new QLabel(tr("This model does not take text: it fills the mask from the image around it."));
  no_text_note_->setWordWrap(true);
  layout->addWidget(no_text_note_);

  auto* params = new QGroupBox(tr("Generation"));
  auto* form = new QFormLayout(params);
  auto* seed_row = new QHBoxLayout;
  seed_ = new QSpinBox;
  seed_->setRange(0, std::numeric_limits<int>::max());
  random_seed_ = new QCheckBox(tr("Random"));
  seed_row->addWidget(seed_, 1);
  seed_row->addWidget(random_seed_);
  form->addRow(tr("Seed"), seed_row);
  connect(random_seed_, &QCheckBox::toggled, seed_, &QSpinBox::setDisabled);
  steps_ = new QSpinBox;
  steps_->setRange(0, FLASHPS_MAX_STEPS);  // the SDK's bound (flashps/editor.h)
  steps_->setSpecialValueText(tr("Model default"));  // shown for 0
  steps_->setToolTip(tr("Denoising steps; \"Model default\" runs the model's recommendation"));
  form->addRow(tr("Steps"), steps_);
  strength_ = new QDoubleSpinBox;
  strength_->setRange(0.05, 1.0);
  strength_->setSingleStep(0.05);
  form->addRow(tr("Strength"), strength_);
  texture_ = new QComboBox;
  texture_->addItem(tr("Model default"), -1);
  texture_->addItem(tr("From surroundings"), 1);
  texture_->addItem(tr("Off (model's own fill)"), 0);
  texture_->setToolTip(tr("Copy fine detail from around the mask into the fill (small models fill smoothly)"));
  form->addRow(tr("Texture"), texture_);
  variations_ = new QSpinBox;
  variations_->setRange(1, 8);
  form->addRow(tr("Variations"), variations_);
  capture_ = new QCheckBox(tr("Capture template after a full run"));
  capture_->setToolTip(tr("Later edits of the same image then compute only the masked region"));
  form->addRow(capture_);
  layout->addWidget(params);

  auto* mask_box = new QGroupBox(tr("Mask"));
  auto* mask_form = new QFormLayout(mask_box);
  grow_ = new QSpinBox;
  grow_->setRange(0, 128);
  grow_->setSuffix(tr(" px"));
  feather_ = new QSpinBox;
  feather_->setRange(0, 128);
  feather_->setSuffix(tr(" px"));
  preview_ = new QCheckBox(tr("Preview the mask that will be used"));
  mask_form->addRow(tr("Grow"), grow_);
  mask_form->addRow(tr("Feather"), feather_);
  mask_form->addRow(preview_);
  auto* overlay_row = new QHBoxLayout;
  overlay_button_ = new QPushButton(tr("Colour"));
  opacity_ = new QSlider(Qt::Horizontal);
  opacity_->setRange(0, 100);
  overlay_row->addWidget(overlay_button_);
  overlay_row->addWidget(opacity_, 1);
  mask_form->addRow(tr("Overlay"), overlay_row);
  layout->addWidget(mask_box);
  connect(grow_, &QSpinBox::valueChanged, this, &GenerationPanel::emitMaskPreview);
  connect(feather_, &QSpinBox::valueChanged, this, &GenerationPanel::emitMaskPreview);
  connect(preview_, &QCheckBox::toggled, this, &GenerationPanel::emitMaskPreview);
  connect(overlay_button_, &QPushButton::clicked, this, &GenerationPanel::chooseOverlayColour);
  connect(opacity_, &QSlider::valueChanged, this, [this] { Q_EMIT overlayChanged(overlay_colour_, overlayOpacity()); });

  auto* run_row = new QHBoxLayout;
  generate_ = new QPushButton(tr("Generate"));
  generate_->setDefault(true);
  generate_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return));
  cancel_ = new QPushButton(tr("Cancel"));
  cancel_->setVisible(false);
  run_row->addWidget(generate_, 1);
  run_row->addWidget(cancel_);
  layout->addLayout(run_row);
  connect(generate_, &QPushButton::clicked, this, &GenerationPanel::generateRequested);
  connect(cancel_, &QPushButton::clicked, this, &GenerationPanel::cancelRequested);
  progress_ = new QProgressBar;
  progress_->setRange(0, 1);
  progress_->setValue(0);
  progress_->setFormat(tr("idle"));
  layout->addWidget(progress_);
  stage_ = new QLabel;
  cache_status_ = new QLabel(tr("Template cache: nothing captured yet"));
  cache_status_->setWordWrap(true);
  timing_ = new QLabel;
  timing_->setWordWrap(true);
  layout->addWidget(stage_);
  layout->addWidget(cache_status_);
  layout->addWidget(timing_);
  layout->addStretch(1);
}

GenerationSettings GenerationPanel::settings() const {
  GenerationSettings settings;
  settings.model_dir = model_->text().trimmed();
  settings.prompt = prompt_->toPlainText();
  settings.negative_prompt = negative_prompt_->text();
  settings.seed = quint64(seed_->value());
  settings.random_seed = random_seed_->isChecked();
  settings.steps = steps_->value();
  settings.strength = strength_->value();
  settings.variations = variations_->value();
  settings.grow_pixels = grow_->value();
  settings.feather_pixels = feather_->value();
  settings.capture_template = capture_->isChecked();
  settings.texture = texture_->currentData().toInt();
  return settings;
}

void GenerationPanel::setSettings(const GenerationSettings& settings) {
  model_->setText(settings.model_dir);
  prompt_->setPlainText(settings.prompt);
  negative_prompt_->setText(settings.negative_prompt);
  seed_->setValue(int(std::min<quint64>(settings.seed, quint64(seed_->maximum()))));
  random_seed_->setChecked(settings.random_seed);
  steps_->setValue(settings.steps);
  strength_->setValue(settings.strength);
  variations_->setValue(settings.variations);
  grow_->setValue(settings.grow_pixels);
  feather_->setValue(settings.feather_pixels);
  capture_->setChecked(settings.capture_template);
  texture_->setCurrentIndex(std::max(0, texture_->findData(settings.texture)));
  updateModelText();
}

void GenerationPanel::setOverlay(const QColor& colour, double opacity) {
  overlay_colour_ = colour;
  overlay_button_->setStyleSheet(QString("background-color: %1").arg(colour.name()));
  opacity_->setValue(int(opacity * 100 + 0.5));
  Q_EMIT overlayChanged(overlay_colour_, overlayOpacity());
}

double GenerationPanel::overlayOpacity() const { return opacity_->value() / 100.0; }

void GenerationPanel::setBusy(bool busy) {
  generate_->setEnabled(!busy);
  cancel_->setVisible(busy);
  if (!busy) {
    progress_->setRange(0, 1);
    progress_->setValue(0);
    progress_->setFormat(tr("idle"));
    stage_->clear();
  }
}

void GenerationPanel::setProgress(int done, int total, double seconds_per_step, const QString& stage) {
  if (total <= 0) {
    progress_->setRange(0, 0);  // busy indicator: no step count yet (loading)
  } else {
    progress_->setRange(0, total);
    progress_->setValue(done);
    QString format = tr("step %1/%2").arg(done).arg(total);
    if (seconds_per_step > 0) format += tr(" · %1 s/it").arg(seconds_per_step, 0, 'f', 2);
    progress_->setFormat(format);
  }
  stage_->setText(stage);
}

void GenerationPanel::setCacheStatus(const QString& status) { cache_status_->setText(tr("Template cache: %1").arg(status)); }
void GenerationPanel::setTiming(const QString& text) { timing_->setText(text); }

void GenerationPanel::updateModelText() {
  const QString option = model_->text().trimmed();
  if (model_described_ && option == described_option_) return;
  // Until the model is loaded, whether it takes text is unknown: prompts stay hidden.
  model_described_ = false;
  prompts_->setVisible(false);
  no_text_note_->setVisible(false);
  model_status_->setText(tr("Loading the model…"));
  Q_EMIT modelChanged(option);
}

void GenerationPanel::setModel(const ModelSummary& model) {
  if (model.option != model_->text().trimmed()) return;  // a model chosen before this one
  model_described_ = true;
  described_option_ = model.option;
  prompts_->setVisible(model.takes_text);
  no_text_note_->setVisible(!model.takes_text);
  model_status_->setText(model.description);
  model_status_->setToolTip(model.directory);
}

void GenerationPanel::setModelFailed(const QString& model_option, const QString& message) {
  if (model_option != model_->text().trimmed()) return;
  model_described_ = false;
  model_status_->setText(tr("Cannot load this model: %1").arg(message));
}

void GenerationPanel::chooseModelFolder() {
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Diffusers model folder"), model_->text());
  if (dir.isEmpty()) return;
  model_->setText(dir);
  updateModelText();
}

// A single-file checkpoint; the SDK recognises what it is (files that need --vae etc. are
// refused with the flag to pass, shown in the model status line).
void GenerationPanel::chooseModelFile() {
  const QString file = QFileDialog::getOpenFileName(this, tr("Model file"), model_->text(),
                                                    tr("Model files (*.safetensors *.gguf)"));
  if (file.isEmpty()) return;
  model_->setText(file);
  updateModelText();
}

void GenerationPanel::chooseOverlayColour() {
  const QColor colour = QColorDialog::getColor(overlay_colour_, this, tr("Mask overlay colour"));
  if (colour.isValid()) setOverlay(colour, overlayOpacity());
}

void GenerationPanel::emitMaskPreview() { Q_EMIT maskPreviewChanged(preview_->isChecked(), grow_->value(), feather_->value()); }

}  // namespace flashps_paint
