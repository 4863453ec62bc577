#include "plugin_paths.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace flashps::plugins {
namespace {

namespace fs = std::filesystem;

fs::path executable_folder() {
  std::error_code error;
  const fs::path executable = fs::read_symlink("/proc/self/exe", error);
  return error ? fs::path() : executable.parent_path();
}

// The folder of the file this code is linked into: the program when the host is linked statically
// (the CLI, flashps-paint), <prefix>/<libdir> for libflashps_plugin_host.so in a third-party program.
fs::path own_file_folder() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&own_file_folder), &info) == 0 || !info.dli_fname) return {};
  std::error_code error;
  const fs::path file = fs::canonical(info.dli_fname, error);
  return error ? fs::path() : file.parent_path();
}

// <prefix> of a library folder: <prefix>/<libdir> installed (libdir may be lib/x86_64-linux-gnu),
// else one level up (<build>/lib in the build tree).
fs::path prefix_of_library_folder(const fs::path& folder) {
  const fs::path libdir = fs::path(FLASHPS_INSTALL_LIBDIR).lexically_normal();
  const std::vector<fs::path> parts(libdir.begin(), libdir.end());
  fs::path prefix = folder;
  for (auto part = parts.rbegin(); part != parts.rend(); ++part) {
    if (prefix.filename() != *part) return folder.parent_path();
    prefix = prefix.parent_path();
  }
  return prefix;
}

// The installation prefixes the host can be part of: when it is a shared library, the library's
// first (its own runner and first-party plugins); then the program's (bin/, or a build-tree folder
// one level below the root).
std::vector<fs::path> installation_roots() {
  std::vector<fs::path> roots;
  const fs::path program = executable_folder();
  const fs::path library = own_file_folder();
  if (!library.empty() && library != program) roots.push_back(prefix_of_library_folder(library));
  if (!program.empty() && std::find(roots.begin(), roots.end(), program.parent_path()) == roots.end())
    roots.push_back(program.parent_path());
  return roots;
}

std::string normalized(const fs::path& path) {
  std::error_code error;
  const fs::path canonical = fs::weakly_canonical(path, error);
  return (error ? path : canonical).lexically_normal().string();
}

}  // namespace

std::vector<std::string> installation_plugin_folders() {
  std::vector<std::string> folders;
  for (const fs::path& root : installation_roots()) {
    for (const char* libdir : {FLASHPS_INSTALL_LIBDIR, "lib"}) {
      const std::string folder = normalized(root / libdir / "flashps" / "plugins");
      if (std::find(folders.begin(), folders.end(), folder) == folders.end()) folders.push_back(folder);
    }
  }
  return folders;
}

std::vector<SearchFolder> default_search_folders() {
  std::vector<SearchFolder> folders;
  if (const char* path = std::getenv("FLASHPS_PLUGIN_PATH")) {
    std::string list = path;
    size_t start = 0;
    while (start <= list.size()) {
      size_t end = list.find(':', start);
      if (end == std::string::npos) end = list.size();
      if (end > start) folders.push_back({normalized(list.substr(start, end - start)), false});
      start = end + 1;
    }
  }
  const char* data_home = std::getenv("XDG_DATA_HOME");
  const char* home = std::getenv("HOME");
  if (data_home && *data_home)
    folders.push_back({normalized(fs::path(data_home) / "flashps" / "plugins"), false});
  else if (home && *home)
    folders.push_back({normalized(fs::path(home) / ".local" / "share" / "flashps" / "plugins"), false});
  for (const std::string& folder : installation_plugin_folders()) folders.push_back({folder, true});
  return folders;
}

std::vector<std::string> plugin_files(const std::string& folder) {
  std::vector<std::string> files;
  std::error_code error;
  for (fs::directory_iterator entry(folder, error), end; !error && entry != end; entry.increment(error)) {
    std::error_code type_error;
    if (entry->path().extension() == ".so" && entry->is_regular_file(type_error))
      files.push_back(entry->path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string find_runner(const std::string& configured, std::string* looked_in) {
  std::vector<std::string> candidates;
  if (!configured.empty()) {
    candidates.push_back(configured);
  } else {
    if (const char* variable = std::getenv("FLASHPS_PLUGIN_RUNNER"); variable && *variable) candidates.push_back(variable);
    for (const fs::path& root : installation_roots())
      candidates.push_back(normalized(root / "libexec" / "flashps" / "flashps-plugin-runner"));
  }
  std::string tried;
  for (const std::string& candidate : candidates) {
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    tried += (tried.empty() ? "" : ", ") + candidate;
  }
  if (looked_in) *looked_in = tried;
  return "";
}

}  // namespace flashps::plugins
