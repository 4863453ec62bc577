// FlashPS plugin host: finds filter plugins (flashps/plugin.h), checks them, and runs them on an
// image and its selection, third-party ones in a separate process so that a crash, a hang or a
// runaway allocation stops there and is reported instead of taking the program down.
//
// Quick start:
//   #include <flashps/plugin_host.hpp>
//   namespace fp = flashps::plugins;
//   fp::PluginHost host = fp::PluginHost::open();          // FLASHPS_PLUGIN_PATH, ~/.local/share, install
//   for (const fp::PluginInfo& plugin : host.plugins()) std::puts(plugin.name.c_str());
//   fp::RunRequest request;
//   request.image = flashps::sdk::Image::load("photo.png");
//   request.mask = flashps::sdk::Image::load("mask.png");
//   request.parameters = {{"seed", "7"}};
//   request.progress = [](const fp::Progress& p) { return true; };   // false cancels
//   fp::RunResult result = host.run("flashps.generative-fill", request);
//   result.images[0].save("out.png");
//
// Failures throw PluginError, whose failure() says what happened (crashed, hung, ...) and whose
// message names the plugin and its file. The host itself keeps working after any of them.
#ifndef FLASHPS_PLUGIN_HOST_HPP
#define FLASHPS_PLUGIN_HOST_HPP

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "flashps/flashps.hpp"

namespace flashps::plugins {

enum class ParameterType { integer = 1, number = 2, boolean = 3, text = 4, choice = 5 };

struct ParameterSpec {
  std::string key, label, description;
  ParameterType type = ParameterType::integer;
  double minimum = 0, maximum = 0, default_number = 0;  // text: maximum = most characters
  std::string default_text;
  std::vector<std::string> choices;
  std::string default_value() const;  // as text, the form --param key=value takes
};

struct PluginInfo {
  std::string name, title, version, vendor, category, description;
  bool needs_mask = false, needs_model = false, takes_text = false;
  std::vector<ParameterSpec> parameters;
  uint32_t abi_version = 0;
  std::string path;          // the shared library
  bool first_party = false;  // shipped with FlashPS (its own plugin folder)
  bool in_process = false;   // runs inside the host (first-party by default, or as asked)
};

// A library that was found but not loaded, and why.
struct LoadProblem {
  std::string path, message;
};

enum class Isolation {
  automatic,      // first-party plugins in the host's process, others in flashps-plugin-runner
  in_process,     // every plugin inside the host (trusted code only)
  out_of_process  // every plugin in flashps-plugin-runner
};

struct HostOptions {
  // Folders searched, in order; a name found twice keeps the first and reports the second.
  // Empty: $FLASHPS_PLUGIN_PATH (':'-separated), ~/.local/share/flashps/plugins, and the
  // installation's lib/flashps/plugins.
  std::vector<std::string> search_path;
  Isolation isolation = Isolation::automatic;
  // A runner that sends nothing (no progress, no log line) for this long is killed.
  double idle_timeout_seconds = 120;
  // A runner's memory limit (its heap and anonymous mappings, RLIMIT_DATA): 0: the machine's
  // physical memory, so a runaway plugin stops before it swaps the machine; < 0: none.
  int64_t memory_limit_bytes = 0;
  // What one run's memory suite (scratch) and results may hold together.
  int64_t scratch_limit_bytes = int64_t(2) << 30;
  // The model the engine suite offers: empty: the default model (flashps_default_model_dir()).
  std::string model_dir;
  std::string cache_dir;  // the activation store; empty: the default store
  std::string device;     // empty: "cpu"
  // flashps-plugin-runner; empty: $FLASHPS_PLUGIN_RUNNER, else next to the installation.
  std::string runner_path;
};

struct Progress {
  std::string stage;  // "load", "denoise", "plugin", ...
  int done = 0, total = 0;
};

struct RunRequest {
  sdk::Image image;  // RGB or RGBA
  // Empty: no selection; else 1, 3 or 4 channels, read as an edit reads it (sdk::mask::for_image:
  // the SDK's rule, resized with nearest neighbour to the image when its size differs).
  sdk::Image mask;
  std::map<std::string, std::string> parameters;  // key -> value as text; missing keys take defaults
  std::function<bool(const Progress&)> progress;  // return false to cancel
  std::function<void(const std::string& line)> log;
};

struct RunResult {
  std::vector<sdk::Image> images;  // one per result the plugin made
  std::vector<std::string> notes;  // the plugin's notes and its edits' notes
  bool cache_hit = false;          // an edit reused a registered template
  std::string template_hash;
  double seconds = 0;
  bool in_process = false;
};

enum class Failure {
  not_found,       // no plugin of that name
  bad_request,     // parameter values, image or mask the plugin cannot take
  plugin_error,    // the plugin returned an error (its message)
  cancelled,
  crashed,         // the runner died from a signal
  out_of_memory,   // it reached its memory limit
  hung,            // nothing heard for idle_timeout_seconds: killed
  exited,          // the runner exited before finishing
  protocol,        // the runner sent something malformed: stopped
  host_error       // the host could not run it (no runner, no memory)
};

class PluginError : public std::runtime_error {
 public:
  PluginError(Failure failure, const std::string& message) : std::runtime_error(message), failure_(failure) {}
  Failure failure() const { return failure_; }
  static const char* failure_name(Failure failure);

 private:
  Failure failure_;
};

class PluginHost {
 public:
  // Finds and checks the plugins (third-party descriptors are read in a runner). Does not throw
  // for a bad plugin: it goes to problems().
  static PluginHost open(const HostOptions& options = {});
  PluginHost();
  ~PluginHost();
  PluginHost(PluginHost&&) noexcept;
  PluginHost& operator=(PluginHost&&) noexcept;

  const std::vector<PluginInfo>& plugins() const;
  const std::vector<LoadProblem>& problems() const;
  const PluginInfo* find(const std::string& name) const;
  const HostOptions& options() const;

  // Runs a plugin to completion; throws PluginError. Thread-safe: runs may overlap.
  RunResult run(const std::string& name, const RunRequest& request) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace flashps::plugins

#endif  // FLASHPS_PLUGIN_HOST_HPP
