// The Filters menu, built from the plugins the plugin host found (flashps/plugin_host.hpp): one
// submenu per category, one action per plugin (its description as tooltip), and a disabled entry
// naming the libraries that could not be loaded. Actions that cannot run now (no image, a running
// filter, or no selection for a plugin that needs one) are disabled with the reason as tooltip.
#pragma once
#include <QHash>
#include <QMenu>
#include <functional>
#include <memory>
#include <vector>

#include <flashps/plugin_host.hpp>

namespace flashps_paint {

// What the menu needs to know about the document to enable its actions.
struct FilterContext {
  bool has_image = false, has_selection = false, busy = false;
};

// A plugin's title for captions and dialogs: without the menu's trailing ellipsis.
QString plugin_title(const flashps::plugins::PluginInfo& plugin);

class FilterMenu : public QMenu {
  Q_OBJECT
 public:
  using Host = std::shared_ptr<const flashps::plugins::PluginHost>;

  // `context` is asked each time the menu opens: scanning the mask on every stroke would cost more.
  explicit FilterMenu(std::function<FilterContext()> context, QWidget* parent = nullptr);

  // Finds the plugins (third-party descriptors are read in a runner); once, at start-up. A host
  // that cannot search at all leaves the menu empty but for that reason.
  void openHost(const flashps::plugins::HostOptions& options = {});
  void setHost(Host host, const QString& open_error = {});
  // Never null. Runs keep their own reference, so a host replaced meanwhile lives until they end.
  Host host() const { return host_; }

  QAction* actionFor(const QString& plugin_name) const { return actions_.value(plugin_name); }
  QMenu* submenu(const QString& category) const;
  QAction* problemsAction() const { return problems_; }
  void refresh();  // enables each action for the document as it is now

 Q_SIGNALS:
  void pluginChosen(const QString& plugin_name);

 private:
  void rebuild();

  std::function<FilterContext()> context_;
  Host host_;
  QString open_error_;
  std::vector<QMenu*> submenus_;
  QHash<QString, QAction*> actions_;
  QAction* problems_ = nullptr;
};

}  // namespace flashps_paint
