#include "flashps/plugin_host.hpp"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <set>

#include "descriptor_json.h"
#include "filter_session.h"
#include "out_of_process.h"
#include "parameter_values.h"
#include "plugin_library.h"
#include "plugin_paths.h"

namespace flashps::plugins {
namespace {

using Clock = std::chrono::steady_clock;

// The public C API of this process, for the engine suite of plugins run in it.
const EngineFunctions& host_engine_functions() {
  static const EngineFunctions functions = [] {
    EngineFunctions table;
    table.edit_default_params = flashps_edit_default_params;
    table.editor_default_params = flashps_editor_default_params;
    table.editor_open = flashps_editor_open;
    table.editor_close = flashps_editor_close;
    table.editor_info = flashps_editor_info;
    table.template_lookup = flashps_template_lookup;
    table.template_register_masked = flashps_template_register_masked;
    table.edit = flashps_edit;
    table.image_free = flashps_image_free;
    table.last_error = flashps_last_error;
    table.store_default_directory = flashps_store_default_directory;
    table.init = flashps_init;
    table.runtime_default_options = flashps_runtime_default_options;
    return table;
  }();
  return functions;
}

}  // namespace

const char* PluginError::failure_name(Failure failure) {
  switch (failure) {
    case Failure::not_found: return "not_found";
    case Failure::bad_request: return "bad_request";
    case Failure::plugin_error: return "plugin_error";
    case Failure::cancelled: return "cancelled";
    case Failure::crashed: return "crashed";
    case Failure::out_of_memory: return "out_of_memory";
    case Failure::hung: return "hung";
    case Failure::exited: return "exited";
    case Failure::protocol: return "protocol";
    case Failure::host_error: return "host_error";
  }
  return "unknown";
}

struct PluginHost::State {
  HostOptions options;
  std::vector<PluginInfo> plugins;
  std::vector<LoadProblem> problems;
  std::map<std::string, const flashps_plugin_descriptor*> loaded;  // in-process plugins
  std::string runner_path, runner_looked_in;
  // The in-process engine suite's model, opened on first use and shared by later runs.
  std::mutex editor_mutex;
  sdk::Editor editor;
  std::string editor_error;

  flashps_editor* open_editor(const std::function<bool(const Progress&)>& progress, std::string* error);
  RunResult run_in_process(const PluginInfo& plugin, const RunRequest& request, ParameterValues values,
                           sdk::Image selection);
};

flashps_editor* PluginHost::State::open_editor(const std::function<bool(const Progress&)>& progress,
                                               std::string* error) {
  std::lock_guard<std::mutex> lock(editor_mutex);
  if (!editor) {
    try {
      sdk::EditorOptions editor_options;
      editor_options.device = options.device;
      editor_options.capture_dir = options.cache_dir.empty() ? flashps_store_default_directory() : options.cache_dir;
      if (progress)
        editor_options.progress = [&](const std::string& stage, int step, int total, double) {
          return progress(Progress{stage, step, total});
        };
      editor = sdk::Editor::open(options.model_dir, editor_options);
    } catch (const std::exception& failure) {
      *error = failure.what();
      return nullptr;
    }
  }
  return editor.get();
}

RunResult PluginHost::State::run_in_process(const PluginInfo& plugin, const RunRequest& request,
                                            ParameterValues values, sdk::Image selection) {
  const auto start = Clock::now();
  Progress last{"plugin", 0, 0};
  bool keep_going = true;
  auto last_asked = Clock::now();
  SessionHooks hooks;
  hooks.progress = [&](const Progress& progress) {
    last = progress;
    last_asked = Clock::now();
    if (keep_going && request.progress) keep_going = request.progress(progress);
    return keep_going;
  };
  // Cancel is asked through the progress function, at most every 100 ms between reports.
  hooks.cancelled = [&] {
    if (keep_going && request.progress && Clock::now() - last_asked > std::chrono::milliseconds(100)) {
      last_asked = Clock::now();
      keep_going = request.progress(last);
    }
    return !keep_going;
  };
  hooks.log = [&](int, const std::string& text) {
    if (request.log) request.log(text);
  };
  hooks.memory_budget_bytes = options.scratch_limit_bytes;
  if (plugin.needs_model) {
    hooks.engine = &host_engine_functions();
    hooks.editor = [&](std::string* error) { return open_editor(hooks.progress, error); };
  }
  FilterSession session(*loaded.at(plugin.name), plugin, request.image, std::move(selection), std::move(values), hooks);
  SessionOutcome outcome = session.run();
  if (outcome.status == FLASHPS_PLUGIN_CANCELLED) throw PluginError(Failure::cancelled, "plugin " + plugin.name + " was cancelled");
  if (outcome.status != FLASHPS_PLUGIN_OK) throw PluginError(Failure::plugin_error, "plugin " + plugin.name + ": " + outcome.error);
  RunResult result;
  result.images = std::move(outcome.results);
  result.notes = std::move(outcome.notes);
  summarize_edits(outcome.edits, result);
  result.in_process = true;
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

PluginHost::PluginHost() : state_(std::make_unique<State>()) {}
PluginHost::~PluginHost() = default;
PluginHost::PluginHost(PluginHost&&) noexcept = default;
PluginHost& PluginHost::operator=(PluginHost&&) noexcept = default;

PluginHost PluginHost::open(const HostOptions& options) {
  PluginHost host;
  State& state = *host.state_;
  state.options = options;
  std::vector<SearchFolder> folders;
  if (options.search_path.empty()) {
    folders = default_search_folders();
  } else {
    const std::vector<std::string> installed = installation_plugin_folders();
    for (const std::string& folder : options.search_path)
      folders.push_back({folder, std::find(installed.begin(), installed.end(), folder) != installed.end()});
  }
  state.runner_path = find_runner(options.runner_path, &state.runner_looked_in);
  std::map<std::string, std::string> taken;  // name -> path
  for (const SearchFolder& folder : folders) {
    for (const std::string& path : plugin_files(folder.path)) {
      const bool in_process = options.isolation == Isolation::in_process ||
                              (options.isolation == Isolation::automatic && folder.first_party);
      try {
        nlohmann::json descriptor_json;
        const flashps_plugin_descriptor* descriptor = nullptr;
        if (in_process) {
          descriptor = open_plugin_library(path);
          descriptor_json = descriptor_to_json(descriptor);
        } else {
          if (state.runner_path.empty())
            throw std::runtime_error("flashps-plugin-runner, which runs third-party plugins, was not found (looked in " +
                                     state.runner_looked_in + "; set FLASHPS_PLUGIN_RUNNER)");
          descriptor_json = describe_in_runner(state.runner_path, path, options.idle_timeout_seconds);
        }
        PluginInfo info = validate_descriptor(descriptor_json, path);
        if (const auto clash = taken.find(info.name); clash != taken.end())
          throw std::runtime_error("the name " + info.name + " is taken by " + clash->second + ", found first");
        info.first_party = folder.first_party;
        info.in_process = in_process;
        taken[info.name] = path;
        if (descriptor) state.loaded[info.name] = descriptor;
        state.plugins.push_back(std::move(info));
      } catch (const std::exception& error) {
        state.problems.push_back({path, path + ": " + error.what()});
      }
    }
  }
  return host;
}

const std::vector<PluginInfo>& PluginHost::plugins() const { return state_->plugins; }
const std::vector<LoadProblem>& PluginHost::problems() const { return state_->problems; }
const HostOptions& PluginHost::options() const { return state_->options; }

const PluginInfo* PluginHost::find(const std::string& name) const {
  for (const PluginInfo& plugin : state_->plugins)
    if (plugin.name == name) return &plugin;
  return nullptr;
}

RunResult PluginHost::run(const std::string& name, const RunRequest& request) const {
  const PluginInfo* plugin = find(name);
  if (!plugin) {
    std::string known;
    for (const PluginInfo& each : state_->plugins) known += (known.empty() ? "" : ", ") + each.name;
    throw PluginError(Failure::not_found, "no plugin is called " + name +
                                              (known.empty() ? " (no plugins were found)" : " (there are: " + known + ")"));
  }
  const std::string where = "plugin " + plugin->name;
  if (request.image.empty() || (request.image.channels != 3 && request.image.channels != 4))
    throw PluginError(Failure::bad_request, where + ": the image must be RGB or RGBA");
  sdk::Image selection;
  // The SDK's rule and resize (a mask of another size is resized as an edit resizes it), so a
  // filter's selection is the region an edit of this image regenerates.
  if (!request.mask.empty()) selection = sdk::mask::for_image(request.mask, request.image.width, request.image.height);
  bool selected = false;
  for (uint8_t value : selection.pixels) selected = selected || value >= 128;
  if (plugin->needs_mask && !selected)
    throw PluginError(Failure::bad_request, where + " needs a selection: give a mask with the region to change");
  ParameterValues values = ParameterValues::parse(*plugin, request.parameters);
  if (plugin->in_process) return state_->run_in_process(*plugin, request, std::move(values), std::move(selection));
  if (state_->runner_path.empty())
    throw PluginError(Failure::host_error, "flashps-plugin-runner was not found (looked in " + state_->runner_looked_in + ")");
  try {
    return run_in_runner(state_->runner_path, state_->options, *plugin, request, values.as_text(), selection);
  } catch (const PluginError&) {
    throw;
  } catch (const std::exception& error) {
    throw PluginError(Failure::host_error, where + ": " + error.what());
  }
}

}  // namespace flashps::plugins
