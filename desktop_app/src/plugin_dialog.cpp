#include "plugin_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>
#include <climits>
#include <cmath>

#include "filter_menu.h"

namespace flashps_paint {

namespace fp = flashps::plugins;

namespace {

QString text(const std::string& value) { return QString::fromStdString(value); }

int clamp_int(double value) { return int(std::clamp(value, double(INT_MIN), double(INT_MAX))); }

QWidget* make_editor(const fp::ParameterSpec& spec) {
  switch (spec.type) {
    case fp::ParameterType::integer: {
      auto* box = new QSpinBox;
      box->setRange(clamp_int(spec.minimum), clamp_int(spec.maximum));
      return box;
    }
    case fp::ParameterType::number: {
      auto* box = new QDoubleSpinBox;
      // A step of about a tenth of the range's order of magnitude, and the decimals to show it.
      const double range = spec.maximum - spec.minimum;
      const int magnitude = range > 0 ? int(std::floor(std::log10(range))) : 0;
      box->setDecimals(std::clamp(2 - magnitude, 2, 6));
      box->setRange(spec.minimum, spec.maximum);
      box->setSingleStep(std::pow(10.0, magnitude - 1));
      return box;
    }
    case fp::ParameterType::boolean: return new QCheckBox;
    case fp::ParameterType::text:
      if (spec.key == "prompt") {
        auto* edit = new QPlainTextEdit;
        edit->setTabChangesFocus(true);
        edit->setMaximumHeight(edit->fontMetrics().lineSpacing() * 4 + 12);
        return edit;
      } else {
        auto* edit = new QLineEdit;
        // The host counts bytes of UTF-8; characters are close enough here, the host checks.
        if (spec.maximum > 0) edit->setMaxLength(clamp_int(spec.maximum));
        return edit;
      }
    case fp::ParameterType::choice: {
      auto* box = new QComboBox;
      for (const std::string& choice : spec.choices) box->addItem(text(choice));
      return box;
    }
  }
  return new QLineEdit;
}

}  // namespace

PluginDialog::PluginDialog(const fp::PluginInfo& plugin, const std::map<std::string, std::string>& initial,
                           QWidget* parent)
    : QDialog(parent) {
  setWindowTitle(plugin_title(plugin));
  auto* layout = new QVBoxLayout(this);
  if (!plugin.description.empty()) {
    auto* description = new QLabel(text(plugin.description));
    description->setWordWrap(true);
    layout->addWidget(description);
  }
  auto* form = new QFormLayout;
  for (const fp::ParameterSpec& spec : plugin.parameters) {
    Field field{spec, make_editor(spec)};
    field.editor->setObjectName(text(spec.key));
    field.editor->setToolTip(text(spec.description));
    const auto given = initial.find(spec.key);
    setValue(field, given != initial.end() ? given->second : spec.default_value());
    auto* label = new QLabel(text(spec.label.empty() ? spec.key : spec.label) + ':');
    label->setToolTip(text(spec.description));
    label->setBuddy(field.editor);
    form->addRow(label, field.editor);
    fields_.push_back(field);
  }
  layout->addLayout(form);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel |
                                       QDialogButtonBox::RestoreDefaults);
  buttons->button(QDialogButtonBox::Ok)->setText(tr("Run"));
  layout->addWidget(buttons);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(buttons->button(QDialogButtonBox::RestoreDefaults), &QPushButton::clicked, this,
          &PluginDialog::restoreDefaults);
  setMinimumWidth(380);
}

void PluginDialog::setValue(const Field& field, const std::string& value) {
  const QString given = text(value);
  if (auto* box = qobject_cast<QSpinBox*>(field.editor)) box->setValue(clamp_int(given.toDouble()));
  else if (auto* box = qobject_cast<QDoubleSpinBox*>(field.editor)) box->setValue(given.toDouble());
  else if (auto* box = qobject_cast<QCheckBox*>(field.editor)) box->setChecked(given == "true" || given == "1");
  else if (auto* edit = qobject_cast<QPlainTextEdit*>(field.editor)) edit->setPlainText(given);
  else if (auto* edit = qobject_cast<QLineEdit*>(field.editor)) edit->setText(given);
  else if (auto* box = qobject_cast<QComboBox*>(field.editor)) box->setCurrentText(given);
}

std::string PluginDialog::value(const Field& field) {
  // QString::number never uses the locale's decimal comma: the host reads C numbers.
  if (auto* box = qobject_cast<QSpinBox*>(field.editor)) return std::to_string(box->value());
  if (auto* box = qobject_cast<QDoubleSpinBox*>(field.editor))
    return QString::number(box->value(), 'g', 10).toStdString();
  if (auto* box = qobject_cast<QCheckBox*>(field.editor)) return box->isChecked() ? "true" : "false";
  if (auto* edit = qobject_cast<QPlainTextEdit*>(field.editor)) return edit->toPlainText().toStdString();
  if (auto* edit = qobject_cast<QLineEdit*>(field.editor)) return edit->text().toStdString();
  if (auto* box = qobject_cast<QComboBox*>(field.editor)) return box->currentText().toStdString();
  return field.spec.default_value();
}

std::map<std::string, std::string> PluginDialog::values() const {
  std::map<std::string, std::string> result;
  for (const Field& field : fields_) result[field.spec.key] = value(field);
  return result;
}

QWidget* PluginDialog::editor(const QString& key) const {
  for (const Field& field : fields_)
    if (text(field.spec.key) == key) return field.editor;
  return nullptr;
}

void PluginDialog::restoreDefaults() {
  for (const Field& field : fields_) setValue(field, field.spec.default_value());
}

}  // namespace flashps_paint
