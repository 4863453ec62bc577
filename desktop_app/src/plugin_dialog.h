// A filter plugin's parameter dialog, generated from its parameter specs (PluginInfo::parameters):
// a spin box per integer or number, a check box per boolean, a line edit per text (a multi-line
// edit for the prompt), a combo box per choice; labels and tooltips from the spec. values() gives
// each value as text, the form `flashps plugin run --param key=value` takes.
#pragma once
#include <QDialog>
#include <map>
#include <string>
#include <vector>

#include <flashps/plugin_host.hpp>

namespace flashps_paint {

class PluginDialog : public QDialog {
  Q_OBJECT
 public:
  // `initial`: values shown instead of the defaults (e.g. the last run's), as values() gives them.
  explicit PluginDialog(const flashps::plugins::PluginInfo& plugin,
                        const std::map<std::string, std::string>& initial = {}, QWidget* parent = nullptr);

  // Every parameter, key -> value as text: integers as integers, booleans "true"/"false".
  std::map<std::string, std::string> values() const;
  // The editor of parameter `key` (its object name is the key), or null.
  QWidget* editor(const QString& key) const;
  void restoreDefaults();

 private:
  struct Field {
    flashps::plugins::ParameterSpec spec;
    QWidget* editor = nullptr;
  };
  static void setValue(const Field& field, const std::string& value);
  static std::string value(const Field& field);

  std::vector<Field> fields_;
};

}  // namespace flashps_paint
