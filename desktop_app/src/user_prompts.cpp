#include "user_prompts.h"

#include <QFileDialog>
#include <QMessageBox>

#include "plugin_dialog.h"

namespace flashps_paint {

UserPrompts UserPrompts::dialogs(QWidget* parent) {
  UserPrompts prompts;
  prompts.confirm_discard = [parent](const QString& question) {
    QMessageBox box(QMessageBox::Warning, QObject::tr("Unsaved changes"), question,
                    QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, parent);
    box.setDefaultButton(QMessageBox::Save);
    switch (box.exec()) {
      case QMessageBox::Save: return DiscardChoice::save;
      case QMessageBox::Discard: return DiscardChoice::discard;
      default: return DiscardChoice::cancel;
    }
  };
  prompts.save_path = [parent](const QString& caption, const QString& folder, const QString& filter) {
    return QFileDialog::getSaveFileName(parent, caption, folder, filter);
  };
  prompts.filter_parameters = [parent](const flashps::plugins::PluginInfo& plugin,
                                       std::map<std::string, std::string>& values) {
    PluginDialog dialog(plugin, values, parent);
    if (dialog.exec() != QDialog::Accepted) return false;
    values = dialog.values();
    return true;
  };
  return prompts;
}

}  // namespace flashps_paint
