#include "filter_menu.h"

#include <QAction>
#include <QStringList>
#include <algorithm>
#include <exception>
#include <map>

namespace flashps_paint {

namespace fp = flashps::plugins;

namespace {
QString text(const std::string& value) { return QString::fromStdString(value); }
}  // namespace

QString plugin_title(const fp::PluginInfo& plugin) {
  QString title = text(plugin.title.empty() ? plugin.name : plugin.title);
  if (title.endsWith(QStringLiteral("…"))) title.chop(1);
  else if (title.endsWith(QStringLiteral("..."))) title.chop(3);
  return title.trimmed();
}

FilterMenu::FilterMenu(std::function<FilterContext()> context, QWidget* parent)
    : QMenu(tr("Fi&lters"), parent), context_(std::move(context)), host_(std::make_shared<const fp::PluginHost>()) {
  setObjectName("filters");
  setToolTipsVisible(true);
  connect(this, &QMenu::aboutToShow, this, &FilterMenu::refresh);
  rebuild();
}

void FilterMenu::openHost(const fp::HostOptions& options) {
  try {
    setHost(std::make_shared<const fp::PluginHost>(fp::PluginHost::open(options)));
  } catch (const std::exception& error) {  // bad plugins go to problems(); this is the host itself
    const QString why = QString::fromUtf8(error.what());
    setHost(std::make_shared<const fp::PluginHost>(), tr("the plugin host could not start: %1").arg(why));
  }
}

void FilterMenu::setHost(Host host, const QString& open_error) {
  host_ = host ? std::move(host) : std::make_shared<const fp::PluginHost>();
  open_error_ = open_error;
  rebuild();
}

QMenu* FilterMenu::submenu(const QString& category) const {
  for (QMenu* menu : submenus_)
    if (menu->title() == category) return menu;
  return nullptr;
}

void FilterMenu::rebuild() {
  // Deleting a submenu deletes its actions; clear() then deletes the entries owned by this menu.
  for (QMenu* menu : submenus_) delete menu;
  submenus_.clear();
  clear();
  actions_.clear();
  problems_ = nullptr;

  std::map<QString, std::vector<const fp::PluginInfo*>> by_category;  // categories sorted by name
  for (const fp::PluginInfo& plugin : host_->plugins())
    by_category[plugin.category.empty() ? tr("Other") : text(plugin.category)].push_back(&plugin);
  for (auto& [category, plugins] : by_category) {
    std::sort(plugins.begin(), plugins.end(), [](const fp::PluginInfo* a, const fp::PluginInfo* b) {
      return QString::localeAwareCompare(text(a->title), text(b->title)) < 0;
    });
    QMenu* menu = addMenu(category);
    menu->setToolTipsVisible(true);
    submenus_.push_back(menu);
    for (const fp::PluginInfo* plugin : plugins) {
      QString title = text(plugin->title.empty() ? plugin->name : plugin->title);
      QAction* action = menu->addAction(title.replace('&', QStringLiteral("&&")));  // no accidental mnemonics
      const QString name = text(plugin->name);
      action->setObjectName(name);
      action->setStatusTip(text(plugin->description));
      connect(action, &QAction::triggered, this, [this, name] { Q_EMIT pluginChosen(name); });
      actions_.insert(name, action);
    }
  }
  if (host_->plugins().empty()) addAction(tr("No filter plugins found"))->setEnabled(false);

  QStringList problems;
  if (!open_error_.isEmpty()) problems << open_error_;
  for (const fp::LoadProblem& problem : host_->problems()) problems << text(problem.message);
  if (!problems.isEmpty()) {
    addSeparator();
    problems_ = addAction(problems.size() == 1 ? tr("1 plugin could not be loaded")
                                               : tr("%1 plugins could not be loaded").arg(problems.size()));
    problems_->setEnabled(false);
    problems_->setToolTip(problems.join('\n'));
  }
  refresh();
}

void FilterMenu::refresh() {
  const FilterContext now = context_ ? context_() : FilterContext{true, true, false};
  for (const fp::PluginInfo& plugin : host_->plugins()) {
    QAction* action = actions_.value(text(plugin.name));
    if (!action) continue;
    QString reason;
    if (now.busy) reason = tr("A filter is running");
    else if (!now.has_image) reason = tr("Open an image first");
    else if (plugin.needs_mask && !now.has_selection) reason = tr("Needs a selection: paint a mask first");
    const QString description = text(plugin.description);
    action->setEnabled(reason.isEmpty());
    action->setToolTip(reason.isEmpty() || description.isEmpty() ? reason + description
                                                                  : tr("%1. %2").arg(reason, description));
  }
}

}  // namespace flashps_paint
