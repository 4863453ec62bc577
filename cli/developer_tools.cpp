#include "developer_tools.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

namespace flashps::cli {
namespace {

constexpr const char* kToolName = "flashps-bench";
const char* const kDeveloperCommands[][2] = {
    {"bench", "Benchmarks: edit, quality, photo, store, serve, http (runs flashps-bench)"},
    {"dev", "Developer tools: run-fixture, random-model (runs flashps-bench)"},
    {"profile", "Fit this machine's latency models for the scheduler (runs flashps-bench)"},
};

// The folder of the running executable (empty when /proc is not there).
std::filesystem::path own_folder() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::filesystem::path() : self.parent_path();
}

}  // namespace

const char* developer_command(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument == "--threads") {
      ++i;  // its value
      continue;
    }
    if (argument.rfind("--threads=", 0) == 0) continue;
    for (const auto& command : kDeveloperCommands)
      if (argument == command[0]) return command[0];
    return nullptr;  // the first other argument decides (a CLI command, --help, ...)
  }
  return nullptr;
}

int forward_to_developer_tool(int argc, char** argv) {
  std::vector<char*> arguments(argv, argv + argc);
  arguments.push_back(nullptr);
  const std::filesystem::path folder = own_folder();
  const std::filesystem::path beside = folder / kToolName;
  if (!folder.empty() && ::access(beside.c_str(), X_OK) == 0) {
    const std::string path = beside.string();
    arguments[0] = const_cast<char*>(path.c_str());
    ::execv(path.c_str(), arguments.data());
    std::cerr << "flashps: error: cannot run " << path << ": " << std::strerror(errno) << "\n";
    return 1;
  }
  arguments[0] = const_cast<char*>(kToolName);
  ::execvp(kToolName, arguments.data());  // searches PATH
  const int error = errno;
  if (error == ENOENT) {
    const char* command = developer_command(argc, argv);
    std::cerr << "flashps: error: '" << (command ? command : "this") << "' is a developer command of " << kToolName
              << ", which is not installed (looked in " << (folder.empty() ? "?" : folder.string())
              << " and on PATH); build FlashPS with -DFLASHPS_BUILD_TOOLS=ON\n";
  } else {
    std::cerr << "flashps: error: cannot run " << kToolName << " from PATH: " << std::strerror(error) << "\n";
  }
  return 1;
}

void add_developer_commands(CLI::App& app, CommandAction& action, int argc, char** argv) {
  for (const auto& command : kDeveloperCommands) {
    CLI::App* forwarded = app.add_subcommand(command[0], command[1]);
    forwarded->prefix_command();  // everything after it belongs to flashps-bench
    forwarded->callback([&action, argc, argv] { action = [argc, argv] { return forward_to_developer_tool(argc, argv); }; });
  }
}

}  // namespace flashps::cli
