// Where plugins and the runner are: FLASHPS_PLUGIN_PATH, the user's folder, and the installation
// (found from the running executable, so a build tree and an installed tree both work: bin/ or
// cli/ beside lib/flashps/plugins and libexec/flashps; and, for a program outside the
// installation linking libflashps_plugin_host.so, from that library's folder).
#ifndef FLASHPS_PLUGINS_PLUGIN_PATHS_H
#define FLASHPS_PLUGINS_PLUGIN_PATHS_H

#include <string>
#include <vector>

namespace flashps::plugins {

struct SearchFolder {
  std::string path;
  bool first_party = false;  // the installation's own plugin folder
};

// $FLASHPS_PLUGIN_PATH (':'-separated), then $XDG_DATA_HOME or ~/.local/share /flashps/plugins,
// then the installation's lib/flashps/plugins. Folders that do not exist are kept (and skipped
// when listed) so that `flashps plugin ls` can say where it looked.
std::vector<SearchFolder> default_search_folders();
std::vector<std::string> installation_plugin_folders();

// The plugin libraries (*.so) directly in `folder`, sorted by name.
std::vector<std::string> plugin_files(const std::string& folder);

// flashps-plugin-runner: `configured`, else $FLASHPS_PLUGIN_RUNNER, else the installation's
// libexec/flashps; "" when none exists. `looked_in` receives the places tried.
std::string find_runner(const std::string& configured, std::string* looked_in);

}  // namespace flashps::plugins

#endif
