// Describing and running a plugin in flashps-plugin-runner: the host's side of the conversation
// (plugins/core/runner_protocol.h), the limits it enforces and what each way of dying means.
#ifndef FLASHPS_PLUGINS_OUT_OF_PROCESS_H
#define FLASHPS_PLUGINS_OUT_OF_PROCESS_H

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "flashps/plugin_host.hpp"

namespace flashps::plugins {

// The plugin's descriptor as its runner read it (not yet validated); throws std::runtime_error
// with the reason (cannot load, crashed while describing itself, ...).
nlohmann::json describe_in_runner(const std::string& runner_path, const std::string& plugin_path, double idle_timeout);

// `parameters` checked by the host already; `selection` 1-channel or empty. Throws PluginError.
RunResult run_in_runner(const std::string& runner_path, const HostOptions& options, const PluginInfo& plugin,
                        const RunRequest& request, const std::map<std::string, std::string>& parameters,
                        const sdk::Image& selection);

}  // namespace flashps::plugins

#endif
