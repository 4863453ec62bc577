// The questions the main window asks the user (keep or discard unsaved changes, where to save, a
// filter's parameters), behind replaceable functions: the app shows dialogs, tests answer them.
#pragma once
#include <QString>
#include <functional>
#include <map>
#include <string>

#include <flashps/plugin_host.hpp>

class QWidget;

namespace flashps_paint {

enum class DiscardChoice { save, discard, cancel };

struct UserPrompts {
  // `question` names what is unsaved; Save / Discard / Cancel, as other image editors ask.
  std::function<DiscardChoice(const QString& question)> confirm_discard;
  // A path to save to, or empty when the user cancels. `filter` as QFileDialog takes it.
  std::function<QString(const QString& caption, const QString& folder, const QString& filter)> save_path;
  // A filter plugin's parameter values (PluginDialog, showing `values` first, which it replaces);
  // false when the user cancels.
  std::function<bool(const flashps::plugins::PluginInfo& plugin, std::map<std::string, std::string>& values)>
      filter_parameters;

  static UserPrompts dialogs(QWidget* parent);  // modal dialogs over `parent`
};

}  // namespace flashps_paint
