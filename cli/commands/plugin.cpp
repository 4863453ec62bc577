// `flashps plugin ls | info | run`: the filter plugins this installation finds (flashps/plugin.h),
// through the plugin host (flashps/plugin_host.hpp). Third-party plugins run in
// flashps-plugin-runner, so a crashing plugin ends with a message here, not a crash.
#include <flashps/flashps.hpp>
#include <flashps/plugin_host.hpp>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "interrupt_signals.h"
#include "terminal_progress.h"

namespace flashps::cli {
namespace {

namespace fps = flashps::sdk;
namespace fpp = flashps::plugins;

struct PluginOptions {
  bool json = false, quiet = false;
  std::string isolation = "auto";
  double timeout = 120;
  int64_t memory_limit_mb = 0;
  std::string model, cache_dir, device;
  std::string name, image, mask, out;
  std::vector<std::string> parameters;
};

fpp::PluginHost open_host(const PluginOptions& options) {
  fpp::HostOptions host;
  host.isolation = options.isolation == "in-process"        ? fpp::Isolation::in_process
                   : options.isolation == "out-of-process" ? fpp::Isolation::out_of_process
                                                           : fpp::Isolation::automatic;
  host.idle_timeout_seconds = options.timeout;
  host.memory_limit_bytes = options.memory_limit_mb > 0 ? options.memory_limit_mb << 20 : 0;
  host.model_dir = options.model;
  host.cache_dir = options.cache_dir;
  host.device = options.device;
  return fpp::PluginHost::open(host);
}

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", value);
  return text;
}

void print_problems(const fpp::PluginHost& host) {
  for (const fpp::LoadProblem& problem : host.problems()) std::cerr << "flashps: not loaded: " << problem.message << "\n";
}

// The JSON of `ls --json` and `info --json`, from the public PluginInfo.
nlohmann::json plugin_json(const fpp::PluginInfo& plugin) {
  static const char* const types[] = {"", "int", "float", "bool", "string", "choice"};
  nlohmann::json parameters = nlohmann::json::array();
  for (const fpp::ParameterSpec& spec : plugin.parameters) {
    nlohmann::json entry = {{"key", spec.key},
                            {"label", spec.label},
                            {"type", types[static_cast<int>(spec.type)]},
                            {"default", spec.default_value()},
                            {"description", spec.description}};
    if (spec.type == fpp::ParameterType::integer || spec.type == fpp::ParameterType::number)
      entry["range"] = {spec.minimum, spec.maximum};
    if (spec.type == fpp::ParameterType::choice) entry["choices"] = spec.choices;
    parameters.push_back(entry);
  }
  return {{"name", plugin.name},         {"title", plugin.title},         {"version", plugin.version},
          {"vendor", plugin.vendor},     {"category", plugin.category},   {"description", plugin.description},
          {"needs_mask", plugin.needs_mask}, {"needs_model", plugin.needs_model}, {"takes_text", plugin.takes_text},
          {"abi_version", plugin.abi_version}, {"path", plugin.path},     {"first_party", plugin.first_party},
          {"in_process", plugin.in_process}, {"parameters", parameters}};
}

int list_plugins(const PluginOptions& options) {
  const fpp::PluginHost host = open_host(options);
  if (options.json) {
    nlohmann::json plugins = nlohmann::json::array(), problems = nlohmann::json::array();
    for (const auto& plugin : host.plugins()) plugins.push_back(plugin_json(plugin));
    for (const auto& problem : host.problems()) problems.push_back({{"path", problem.path}, {"message", problem.message}});
    std::cout << nlohmann::json{{"plugins", plugins}, {"problems", problems}}.dump(2) << "\n";
    return 0;
  }
  std::printf("%-28s %-10s %-8s %-20s %s\n", "name", "category", "version", "vendor", "runs");
  for (const auto& plugin : host.plugins())
    std::printf("%-28s %-10s %-8s %-20s %s\n", plugin.name.c_str(), plugin.category.c_str(), plugin.version.c_str(),
                plugin.vendor.c_str(), plugin.in_process ? "in-process" : "isolated");
  std::printf("%zu plugin(s)\n", host.plugins().size());
  print_problems(host);
  return 0;
}

int show_plugin(const PluginOptions& options) {
  const fpp::PluginHost host = open_host(options);
  const fpp::PluginInfo* plugin = host.find(options.name);
  if (!plugin) {
    print_problems(host);
    std::cerr << "flashps: no plugin is called " << options.name << " (flashps plugin ls lists them)\n";
    return 1;
  }
  if (options.json) {
    std::cout << plugin_json(*plugin).dump(2) << "\n";
    return 0;
  }
  std::printf("%s  %s %s by %s\n%s\n", plugin->name.c_str(), plugin->title.c_str(), plugin->version.c_str(),
              plugin->vendor.c_str(), plugin->description.c_str());
  std::printf("file: %s (%s%s)\nneeds: %s%s%s\nparameters:\n", plugin->path.c_str(),
              plugin->first_party ? "first-party, " : "", plugin->in_process ? "runs in-process" : "runs isolated",
              plugin->needs_mask ? "a selection " : "", plugin->needs_model ? "a model " : "",
              plugin->needs_mask || plugin->needs_model ? "" : "nothing");
  for (const auto& spec : plugin->parameters) {
    std::string range;
    if (spec.type == fpp::ParameterType::integer || spec.type == fpp::ParameterType::number)
      range = " [" + number_text(spec.minimum) + ".." + number_text(spec.maximum) + "]";
    if (spec.type == fpp::ParameterType::choice) {
      for (const auto& choice : spec.choices) range += (range.empty() ? " {" : "|") + choice;
      range += "}";
    }
    std::printf("  %-16s %s%s, default \"%s\"  %s\n", spec.key.c_str(), spec.label.c_str(), range.c_str(),
                spec.default_value().c_str(), spec.description.c_str());
  }
  return 0;
}

int run_plugin(const PluginOptions& options) {
  const fpp::PluginHost host = open_host(options);
  fpp::RunRequest request;
  request.image = fps::Image::load(options.image);
  if (!options.mask.empty()) request.mask = fps::Image::load(options.mask);
  for (const std::string& parameter : options.parameters) {
    const size_t equals = parameter.find('=');
    if (equals == std::string::npos || equals == 0) {
      std::cerr << "flashps: --param " << parameter << ": write it as key=value\n";
      return 2;
    }
    request.parameters[parameter.substr(0, equals)] = parameter.substr(equals + 1);
  }
  InterruptSignals signals;
  const fps::ProgressFunction bar = terminal_progress(options.quiet);
  request.progress = [&](const fpp::Progress& progress) {
    if (bar && progress.total > 0) bar(progress.stage, progress.done, progress.total, 0);
    return InterruptSignals::requested_signal() == 0;
  };
  request.log = [&](const std::string& line) {
    if (!options.quiet) std::cerr << "flashps: plugin: " << line << "\n";
  };
  try {
    const fpp::RunResult result = host.run(options.name, request);
    finish_progress_line(options.quiet);
    std::vector<std::string> written;
    for (size_t i = 0; i < result.images.size(); ++i) {
      std::string path = options.out;
      if (result.images.size() > 1) {  // variations: out.png -> out-1.png, out-2.png, ...
        const size_t dot = path.find_last_of('.');
        const std::string suffix = "-" + std::to_string(i + 1);
        path = dot == std::string::npos ? path + suffix : path.substr(0, dot) + suffix + path.substr(dot);
      }
      result.images[i].save(path);
      written.push_back(path);
    }
    for (const std::string& note : result.notes) std::cerr << "flashps: note: " << note << "\n";
    if (options.json) {
      std::cout << nlohmann::json{{"outputs", written},   {"cache_hit", result.cache_hit},
                                  {"template", result.template_hash}, {"seconds", result.seconds},
                                  {"in_process", result.in_process},  {"notes", result.notes}}
                       .dump(2)
                << "\n";
    } else {
      for (const std::string& path : written) std::printf("wrote %s\n", path.c_str());
      std::printf("%s · %.2f s%s\n", result.cache_hit ? "cache hit" : "no cache hit", result.seconds,
                  result.in_process ? "" : " (isolated)");
    }
    return 0;
  } catch (const fpp::PluginError& error) {
    finish_progress_line(options.quiet);
    std::cerr << "flashps: " << error.what() << "\n";
    if (error.failure() == fpp::Failure::cancelled) return 128 + InterruptSignals::requested_signal();
    return error.failure() == fpp::Failure::bad_request || error.failure() == fpp::Failure::not_found ? 2 : 1;
  }
}

void add_host_options(CLI::App* command, PluginOptions& options) {
  command->add_option("--isolation", options.isolation,
                      "auto (first-party plugins in-process, others isolated), in-process or out-of-process")
      ->check(CLI::IsMember({"auto", "in-process", "out-of-process"}));
  command->add_flag("--json", options.json, "JSON output");
}

}  // namespace

void add_plugin_commands(CLI::App& app, CommandAction& action) {
  static PluginOptions options;
  CLI::App* plugin = app.add_subcommand("plugin", "Filter plugins: list, describe and run them");
  plugin->require_subcommand(1);

  CLI::App* ls = plugin->add_subcommand("ls", "List the plugins found (FLASHPS_PLUGIN_PATH, ~/.local/share/flashps/plugins, the installation)");
  add_host_options(ls, options);
  ls->callback([&action] { action = [] { return list_plugins(options); }; });

  CLI::App* info = plugin->add_subcommand("info", "A plugin's description and parameters");
  info->add_option("name", options.name, "Plugin name (flashps plugin ls)")->required();
  add_host_options(info, options);
  info->callback([&action] { action = [] { return show_plugin(options); }; });

  CLI::App* run = plugin->add_subcommand("run", "Run a plugin on an image and its selection");
  run->add_option("name", options.name, "Plugin name (flashps plugin ls)")->required();
  run->add_option("--image", options.image, "Input image (PNG or JPEG)")->required()->check(CLI::ExistingFile);
  run->add_option("--mask", options.mask, "Selection: white (or opaque) pixels are changed")->check(CLI::ExistingFile);
  run->add_option("--param", options.parameters, "A parameter as key=value (repeat it)");
  run->add_option("--out", options.out, "Output image; several results become NAME-1.png, NAME-2.png, ...")->required();
  run->add_option("--model", options.model, "Model folder for plugins that need one (default: the bundled model)");
  run->add_option("--cache-dir", options.cache_dir, "Activation store (default: ~/.cache/flashps/store)");
  run->add_option("--device", options.device, "cpu (default), cuda, cuda:N or auto");
  run->add_option("--timeout", options.timeout, "Seconds an isolated plugin may stay silent before it is killed")
      ->check(CLI::PositiveNumber);
  run->add_option("--memory-limit-mb", options.memory_limit_mb,
                  "Memory an isolated plugin may use (default: the machine's memory)");
  run->add_flag("--quiet,-q", options.quiet, "No progress bar or plugin log");
  add_host_options(run, options);
  run->callback([&action] { action = [] { return run_plugin(options); }; });
}

}  // namespace flashps::cli
