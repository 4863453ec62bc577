// What the host and flashps-plugin-runner say to each other over the runner's channel (fd 3 in
// the runner): frames of "FPS1", a 32-bit little-endian length and that many bytes of JSON. The
// host treats every byte from a runner as untrusted: the plugin shares its process.
#ifndef FLASHPS_PLUGINS_RUNNER_PROTOCOL_H
#define FLASHPS_PLUGINS_RUNNER_PROTOCOL_H

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "filter_session.h"

namespace flashps::plugins::protocol {

constexpr size_t kMaxPayload = size_t(1) << 20;
constexpr int kChannelFd = 3;       // in the runner
constexpr int kSharedMemoryFd = 4;  // in the runner

class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string encode(const nlohmann::json& message);

// Collects bytes and cuts them into messages; throws ProtocolError on a bad header, a length
// over kMaxPayload or a payload that is not a JSON object.
class FrameReader {
 public:
  void feed(const char* data, size_t size);
  bool next(nlohmann::json* message);
  bool idle() const { return buffer_.size() == consumed_; }

 private:
  std::string buffer_;
  size_t consumed_ = 0;
};

// Where an image lies in the shared memory.
struct ImageSlot {
  uint64_t offset = 0;
  uint32_t width = 0, height = 0, channels = 0;
  uint64_t bytes() const { return uint64_t(width) * height * channels; }
};
nlohmann::json slot_to_json(const ImageSlot& slot);

// Runner -> host.
struct RunnerMessage {
  enum class Kind { descriptor, progress, log, note, edit, result, finished };
  Kind kind = Kind::log;
  nlohmann::json descriptor;  // descriptor (checked later by validate_descriptor)
  Progress progress;          // progress
  int level = 0;              // log
  std::string text;           // log, note; finished: the error message
  EditReport edit;            // edit
  ImageSlot result;           // result
  std::string status;         // finished: "ok", "cancelled", "error", "bad_request", "out_of_memory"
};
RunnerMessage parse_runner_message(const nlohmann::json& message);

// Host -> runner.
struct RunMessage {
  std::string plugin_path;
  std::map<std::string, std::string> parameters;
  ImageSlot image;
  bool has_mask = false;
  ImageSlot mask;
  std::string model_dir, cache_dir, device;
  int threads = 0;
  int64_t memory_budget_bytes = 0;
};
nlohmann::json run_message_to_json(const RunMessage& run);
RunMessage parse_run_message(const nlohmann::json& message);

}  // namespace flashps::plugins::protocol

#endif
