#include "runner_run.h"

#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <memory>
#include <thread>

#include "descriptor_json.h"
#include "filter_session.h"
#include "plugin_library.h"
#include "runner_engine.h"
#include "shared_memory.h"

namespace flashps::plugins {
namespace {

std::atomic<bool> cancel_requested{false};

// Blocks until one whole message arrives; false at end of input.
bool read_message(protocol::FrameReader& reader, nlohmann::json* message) {
  char buffer[65536];
  while (!reader.next(message)) {
    const ssize_t got = ::read(protocol::kChannelFd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    reader.feed(buffer, size_t(got));
  }
  return true;
}

// Reads cancels while the plugin runs. The host closing the channel also cancels: nobody wants
// the result, and a runner must not outlive its host by much.
void watch_host(std::shared_ptr<protocol::FrameReader> reader) {
  nlohmann::json message;
  while (true) {
    try {
      if (!read_message(*reader, &message)) break;
    } catch (const std::exception&) {
      break;
    }
    if (message.value("type", "") == "cancel") cancel_requested = true;
  }
  cancel_requested = true;
  std::this_thread::sleep_for(std::chrono::seconds(10));
  _exit(4);  // the plugin ignored the cancel and the host is gone
}

sdk::Image read_image(const SharedMemory& memory, const protocol::ImageSlot& slot) {
  sdk::Image image(slot.width, slot.height, slot.channels);
  memory.read(slot.offset, image.data(), image.pixels.size());
  return image;
}

int finish(RunnerChannel& channel, const std::string& status, const std::string& message) {
  channel.send({{"type", "finished"}, {"status", status}, {"message", message}});
  return 0;
}

}  // namespace

int run_from_host(RunnerChannel& channel) {
  auto reader = std::make_shared<protocol::FrameReader>();
  nlohmann::json message;
  protocol::RunMessage run;
  try {
    if (!read_message(*reader, &message)) return 1;
    run = protocol::parse_run_message(message);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "flashps-plugin-runner: bad run message: %s\n", error.what());
    return 1;
  }
  std::thread(watch_host, reader).detach();

  PluginInfo info;
  const flashps_plugin_descriptor* descriptor = nullptr;
  try {
    descriptor = open_plugin_library(run.plugin_path);
    info = validate_descriptor(descriptor_to_json(descriptor), run.plugin_path);
  } catch (const std::exception& error) {
    return finish(channel, "error", std::string("cannot load ") + run.plugin_path + ": " + error.what());
  }
  SharedMemory memory = SharedMemory::adopt(protocol::kSharedMemoryFd);
  ParameterValues values;
  sdk::Image image, mask;
  try {
    values = ParameterValues::parse(info, run.parameters);
    image = read_image(memory, run.image);
    if (run.has_mask) mask = read_image(memory, run.mask);
  } catch (const PluginError& error) {
    return finish(channel, "bad_request", error.what());
  } catch (const std::exception& error) {
    return finish(channel, "error", error.what());
  }

  SessionHooks hooks;
  hooks.progress = [&](const Progress& progress) {
    channel.send({{"type", "progress"}, {"stage", progress.stage}, {"done", progress.done}, {"total", progress.total}});
    return !cancel_requested;
  };
  hooks.cancelled = [] { return cancel_requested.load(); };
  hooks.log = [&](int level, const std::string& text) {
    channel.send({{"type", "log"}, {"level", std::min(std::max(level, 0), 2)}, {"text", text}});
  };
  hooks.memory_budget_bytes = run.memory_budget_bytes;
  flashps_editor* editor = nullptr;
  std::string editor_error;
  bool editor_tried = false;
  if (info.needs_model) {
    try {
      hooks.engine = &load_runner_engine(run.threads);
    } catch (const std::exception& error) {
      // The plugin hears "no engine"; the host's log says why.
      editor_error = error.what();
      editor_tried = true;
      hooks.log(FLASHPS_PLUGIN_LOG_WARNING, "no model for this plugin: " + editor_error);
    }
    hooks.editor = [&](std::string* error) -> flashps_editor* {
      if (!editor_tried) {
        editor_tried = true;
        const EngineFunctions& engine = *hooks.engine;
        flashps_editor_params params = engine.editor_default_params();
        const std::string capture_dir = run.cache_dir.empty() ? engine.store_default_directory() : run.cache_dir;
        params.capture_dir = capture_dir.c_str();
        params.device = run.device.empty() ? nullptr : run.device.c_str();
        params.progress = [](const char* stage, int step, int total, double, void* user_data) {
          return (*static_cast<SessionHooks*>(user_data)).progress(Progress{stage ? stage : "load", step, total}) ? 1 : 0;
        };
        params.user_data = &hooks;
        if (engine.editor_open(run.model_dir.empty() ? nullptr : run.model_dir.c_str(), &params, &editor) != FLASHPS_OK)
          editor_error = engine.last_error();
      }
      if (!editor) *error = editor_error;
      return editor;
    };
  }

  FilterSession session(*descriptor, info, std::move(image), std::move(mask), std::move(values), hooks);
  SessionOutcome outcome = session.run();
  if (editor) hooks.engine->editor_close(editor);
  for (const EditReport& edit : outcome.edits)
    channel.send({{"type", "edit"},
                  {"cache_hit", edit.cache_hit},
                  {"captured", edit.captured},
                  {"seconds", edit.seconds},
                  {"template_hash", edit.template_hash}});
  for (const std::string& note : outcome.notes) channel.send({{"type", "note"}, {"text", note}});
  if (outcome.status == FLASHPS_PLUGIN_CANCELLED) return finish(channel, "cancelled", "cancelled");
  if (outcome.status != FLASHPS_PLUGIN_OK) return finish(channel, "error", outcome.error);
  try {
    uint64_t offset = (memory.size() + 63) / 64 * 64;
    for (const sdk::Image& result : outcome.results) {
      memory.resize(offset + result.pixels.size());
      memory.write(offset, result.data(), result.pixels.size());
      protocol::ImageSlot slot{offset, result.width, result.height, result.channels};
      channel.send({{"type", "result"}, {"image", protocol::slot_to_json(slot)}});
      offset = (offset + result.pixels.size() + 63) / 64 * 64;
    }
  } catch (const std::exception& error) {
    return finish(channel, "out_of_memory", std::string("cannot hand over its results: ") + error.what());
  }
  return finish(channel, "ok", "");
}

}  // namespace flashps::plugins
