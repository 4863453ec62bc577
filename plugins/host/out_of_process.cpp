#include "out_of_process.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "runner_process.h"
#include "runner_protocol.h"
#include "shared_memory.h"

namespace flashps::plugins {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kHeartbeat = std::chrono::milliseconds(200);
constexpr auto kCancelGrace = std::chrono::seconds(10);

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// How a conversation with a runner ended, before the caller interprets it.
struct Conversation {
  bool finished = false;  // a finished message arrived
  protocol::RunnerMessage finish;
  bool killed_idle = false, killed_after_cancel = false, cancel_sent = false;
  std::string protocol_error;
  RunnerExit exit;
};

// Reads messages until the runner finishes or dies, passing each to `handle`; sends a cancel when
// `keep_going` says so and kills a runner that stays silent too long or ignores the cancel.
template <typename Handle, typename KeepGoing>
Conversation converse(RunnerProcess& runner, double idle_timeout, Handle handle, KeepGoing keep_going) {
  Conversation conversation;
  protocol::FrameReader reader;
  auto last_heard = Clock::now(), last_heartbeat = Clock::now();
  Clock::time_point cancel_deadline{};
  char buffer[65536];
  while (!conversation.finished) {
    pollfd channel{runner.channel(), POLLIN, 0};
    const int ready = ::poll(&channel, 1, int(kHeartbeat.count()));
    if (ready < 0 && errno != EINTR) break;
    if (ready > 0) {
      const ssize_t got = ::read(runner.channel(), buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;  // the runner closed its end: it exited or died
      last_heard = Clock::now();
      try {
        reader.feed(buffer, size_t(got));
        nlohmann::json message;
        while (!conversation.finished && reader.next(&message)) {
          protocol::RunnerMessage parsed = protocol::parse_runner_message(message);
          if (parsed.kind == protocol::RunnerMessage::Kind::finished) {
            conversation.finished = true;
            conversation.finish = std::move(parsed);
          } else {
            handle(parsed);
          }
        }
      } catch (const std::exception& error) {
        conversation.protocol_error = error.what();
        runner.kill();
        break;
      }
    }
    const auto now = Clock::now();
    if (!conversation.cancel_sent && now - last_heartbeat >= kHeartbeat) {
      last_heartbeat = now;
      if (!keep_going()) {
        conversation.cancel_sent = true;
        cancel_deadline = now + kCancelGrace;
        runner.send(protocol::encode({{"type", "cancel"}}));
      }
    }
    if (conversation.cancel_sent && now > cancel_deadline) {
      conversation.killed_after_cancel = true;
      runner.kill();
      break;
    }
    if (idle_timeout > 0 && std::chrono::duration<double>(now - last_heard).count() > idle_timeout) {
      conversation.killed_idle = true;
      runner.kill();
      break;
    }
  }
  if (!conversation.finished || !conversation.protocol_error.empty()) runner.kill();
  conversation.exit = runner.wait();
  return conversation;
}

// The failure a conversation without a proper ending means. `what` is "while running" or
// "while describing itself".
PluginError failure_of(const Conversation& conversation, const std::string& plugin, const std::string& what,
                       double idle_timeout, int64_t memory_limit) {
  if (!conversation.protocol_error.empty())
    return PluginError(Failure::protocol, plugin + " sent a malformed message " + what + " (" +
                                              conversation.protocol_error + "); it was stopped");
  if (conversation.killed_idle)
    return PluginError(Failure::hung, plugin + " stopped responding " + what + ": nothing was heard for " +
                                          std::to_string(int(idle_timeout)) + " s, so it was killed");
  if (conversation.killed_after_cancel)
    return PluginError(Failure::cancelled, plugin + " ignored the cancel for " +
                                               std::to_string(kCancelGrace.count()) + " s, so it was killed");
  const RunnerExit& exit = conversation.exit;
  // A runner that died near its limit ran out of memory, however the plugin handled the failure.
  if (memory_limit > 0 && exit.peak_resident_bytes >= memory_limit * 8 / 10)
    return PluginError(Failure::out_of_memory, plugin + " ran out of memory " + what + " (limit " +
                                                   std::to_string(memory_limit >> 20) + " MiB): its runner " +
                                                   exit.describe());
  if (exit.signaled)
    return PluginError(Failure::crashed, plugin + " crashed " + what + ": its runner " + exit.describe());
  return PluginError(Failure::exited, plugin + " ended " + what + " without finishing: its runner " + exit.describe());
}

int64_t effective_memory_limit(int64_t configured) {
  if (configured < 0) return 0;
  if (configured > 0) return configured;
  return int64_t(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
}

}  // namespace

nlohmann::json describe_in_runner(const std::string& runner_path, const std::string& plugin_path,
                                  double idle_timeout) {
  RunnerProcess runner = RunnerProcess::start(runner_path, {"--describe", plugin_path}, -1);
  nlohmann::json descriptor;
  bool described = false;
  Conversation conversation = converse(
      runner, idle_timeout,
      [&](const protocol::RunnerMessage& message) {
        if (message.kind == protocol::RunnerMessage::Kind::descriptor) {
          descriptor = message.descriptor;
          described = true;
        }
      },
      [] { return true; });
  if (described && conversation.exit.code == 0 && !conversation.exit.signaled) return descriptor;
  if (conversation.finished) throw std::runtime_error(conversation.finish.text);
  throw std::runtime_error(failure_of(conversation, "it", "while describing itself", idle_timeout, 0).what());
}

RunResult run_in_runner(const std::string& runner_path, const HostOptions& options, const PluginInfo& plugin,
                        const RunRequest& request, const std::map<std::string, std::string>& parameters,
                        const sdk::Image& selection) {
  const auto start = Clock::now();
  const std::string name = "plugin " + plugin.name;
  protocol::RunMessage run;
  run.plugin_path = plugin.path;
  run.parameters = parameters;
  run.image = {0, request.image.width, request.image.height, request.image.channels};
  const uint64_t mask_offset = (run.image.bytes() + 63) / 64 * 64;
  run.has_mask = !selection.empty();
  if (run.has_mask) run.mask = {mask_offset, selection.width, selection.height, 1};
  run.model_dir = options.model_dir;
  run.cache_dir = options.cache_dir;
  run.device = options.device;
  run.threads = sdk::threads();
  run.memory_budget_bytes = options.scratch_limit_bytes;
  const int64_t memory_limit = effective_memory_limit(options.memory_limit_bytes);

  SharedMemory memory = SharedMemory::create(run.has_mask ? mask_offset + run.mask.bytes() : run.image.bytes());
  memory.write(0, request.image.data(), request.image.pixels.size());
  if (run.has_mask) memory.write(mask_offset, selection.data(), selection.pixels.size());

  std::vector<std::string> arguments = {"--run"};
  if (memory_limit > 0) arguments.insert(arguments.end(), {"--memory-limit", std::to_string(memory_limit)});
  RunnerProcess runner = RunnerProcess::start(runner_path, arguments, memory.fd());
  if (!runner.send(protocol::encode(protocol::run_message_to_json(run))))
    throw PluginError(Failure::exited, name + ": its runner exited before it was given the run");

  RunResult result;
  std::vector<protocol::ImageSlot> slots;
  std::vector<EditReport> edits;
  Progress last{"plugin", 0, 0};
  bool keep_going = true;
  const auto call_progress = [&] {
    if (keep_going && request.progress) keep_going = request.progress(last);
    return keep_going;
  };
  Conversation conversation = converse(
      runner, options.idle_timeout_seconds,
      [&](const protocol::RunnerMessage& message) {
        using Kind = protocol::RunnerMessage::Kind;
        if (message.kind == Kind::progress) {
          last = message.progress;
          call_progress();
        } else if (message.kind == Kind::log) {
          if (request.log) request.log(message.text);
        } else if (message.kind == Kind::note) {
          result.notes.push_back(message.text);
        } else if (message.kind == Kind::edit) {
          if (edits.size() >= 1024) throw protocol::ProtocolError("more than 1024 edit reports");
          edits.push_back(message.edit);
        } else if (message.kind == Kind::result) {
          if (slots.size() >= 16) throw protocol::ProtocolError("more than 16 results");
          slots.push_back(message.result);
        }
      },
      call_progress);

  if (!conversation.finished) throw failure_of(conversation, name, "while running", options.idle_timeout_seconds, memory_limit);
  const std::string& status = conversation.finish.status;
  const std::string& message = conversation.finish.text;
  if (status == "cancelled") throw PluginError(Failure::cancelled, name + " was cancelled");
  if (status == "bad_request") throw PluginError(Failure::bad_request, message);
  if (status == "out_of_memory") throw PluginError(Failure::out_of_memory, name + ": " + message);
  if (status == "error") throw PluginError(Failure::plugin_error, name + ": " + message);
  try {
    for (const protocol::ImageSlot& slot : slots) {
      sdk::Image image(slot.width, slot.height, slot.channels);
      memory.read(slot.offset, image.data(), image.pixels.size());
      result.images.push_back(std::move(image));
    }
  } catch (const std::exception& error) {
    throw PluginError(Failure::protocol, name + ": its results are not where it said (" + error.what() + ")");
  }
  summarize_edits(edits, result);
  if (result.images.empty()) throw PluginError(Failure::protocol, name + " finished without sending a result");
  result.seconds = seconds_since(start);
  return result;
}

}  // namespace flashps::plugins
