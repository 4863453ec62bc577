#include "runner_protocol.h"

#include <cmath>
#include <cstring>

namespace flashps::plugins::protocol {
namespace {

constexpr char kMagic[4] = {'F', 'P', 'S', '1'};
constexpr uint32_t kMaxSide = 16384;
constexpr size_t kMaxText = 64 * 1024;

[[noreturn]] void fail(const std::string& message) { throw ProtocolError(message); }

const nlohmann::json& field(const nlohmann::json& message, const char* name) {
  const auto found = message.find(name);
  if (found == message.end()) fail(std::string("a message lacks '") + name + "'");
  return *found;
}

std::string text_field(const nlohmann::json& message, const char* name, size_t max_length = kMaxText) {
  const auto& value = field(message, name);
  if (!value.is_string()) fail(std::string("'") + name + "' is not text");
  if (value.get_ref<const std::string&>().size() > max_length) fail(std::string("'") + name + "' is too long");
  return value.get<std::string>();
}

int64_t integer_field(const nlohmann::json& message, const char* name, int64_t minimum, int64_t maximum) {
  const auto& value = field(message, name);
  if (!value.is_number_integer()) fail(std::string("'") + name + "' is not a whole number");
  // Unsigned values above int64's range come through as huge numbers: compare as unsigned first.
  if (value.is_number_unsigned() && value.get<uint64_t>() > uint64_t(INT64_MAX)) fail(std::string("'") + name + "' is out of range");
  const int64_t number = value.get<int64_t>();
  if (number < minimum || number > maximum) fail(std::string("'") + name + "' is out of range");
  return number;
}

ImageSlot parse_slot(const nlohmann::json& json) {
  if (!json.is_object()) fail("an image slot is not an object");
  ImageSlot slot;
  slot.offset = uint64_t(integer_field(json, "offset", 0, int64_t(1) << 48));
  slot.width = uint32_t(integer_field(json, "width", 1, kMaxSide));
  slot.height = uint32_t(integer_field(json, "height", 1, kMaxSide));
  slot.channels = uint32_t(integer_field(json, "channels", 1, 4));
  if (slot.offset % 64 != 0) fail("an image slot is not 64-byte aligned");
  return slot;
}

}  // namespace

std::string encode(const nlohmann::json& message) {
  const std::string payload = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (payload.size() > kMaxPayload) throw ProtocolError("a message of " + std::to_string(payload.size()) + " bytes is too long");
  std::string frame(kMagic, 4);
  const uint32_t length = static_cast<uint32_t>(payload.size());
  for (int i = 0; i < 4; ++i) frame.push_back(static_cast<char>((length >> (8 * i)) & 0xff));
  return frame + payload;
}

void FrameReader::feed(const char* data, size_t size) {
  if (consumed_ > 0 && consumed_ == buffer_.size()) {
    buffer_.clear();
    consumed_ = 0;
  }
  buffer_.append(data, size);
}

bool FrameReader::next(nlohmann::json* message) {
  const size_t available = buffer_.size() - consumed_;
  if (available < 8) return false;
  const char* frame = buffer_.data() + consumed_;
  if (std::memcmp(frame, kMagic, 4) != 0) fail("a frame does not start with FPS1");
  uint32_t length = 0;
  for (int i = 0; i < 4; ++i) length |= uint32_t(static_cast<unsigned char>(frame[4 + i])) << (8 * i);
  if (length > kMaxPayload) fail("a frame claims " + std::to_string(length) + " bytes (at most 1 MiB)");
  if (available < 8 + size_t(length)) return false;
  nlohmann::json parsed = nlohmann::json::parse(frame + 8, frame + 8 + length, nullptr, false);
  consumed_ += 8 + length;
  if (consumed_ == buffer_.size()) {
    buffer_.clear();
    consumed_ = 0;
  } else if (consumed_ > (size_t(1) << 20)) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
  if (parsed.is_discarded() || !parsed.is_object()) fail("a frame's payload is not a JSON object");
  *message = std::move(parsed);
  return true;
}

nlohmann::json slot_to_json(const ImageSlot& slot) {
  return {{"offset", slot.offset}, {"width", slot.width}, {"height", slot.height}, {"channels", slot.channels}};
}

RunnerMessage parse_runner_message(const nlohmann::json& message) {
  if (!message.is_object()) fail("a message is not an object");
  const std::string type = text_field(message, "type", 32);
  RunnerMessage parsed;
  if (type == "descriptor") {
    parsed.kind = RunnerMessage::Kind::descriptor;
    parsed.descriptor = field(message, "plugin");
  } else if (type == "progress") {
    parsed.kind = RunnerMessage::Kind::progress;
    parsed.progress.stage = text_field(message, "stage", 64);
    parsed.progress.done = int(integer_field(message, "done", INT32_MIN, INT32_MAX));
    parsed.progress.total = int(integer_field(message, "total", INT32_MIN, INT32_MAX));
  } else if (type == "log") {
    parsed.kind = RunnerMessage::Kind::log;
    parsed.level = int(integer_field(message, "level", 0, 2));
    parsed.text = text_field(message, "text");
  } else if (type == "note") {
    parsed.kind = RunnerMessage::Kind::note;
    parsed.text = text_field(message, "text");
  } else if (type == "edit") {
    parsed.kind = RunnerMessage::Kind::edit;
    const auto& hit = field(message, "cache_hit");
    const auto& captured = field(message, "captured");
    const auto& seconds = field(message, "seconds");
    if (!hit.is_boolean() || !captured.is_boolean() || !seconds.is_number() || !std::isfinite(seconds.get<double>()))
      fail("an edit report has bad fields");
    parsed.edit.cache_hit = hit.get<bool>();
    parsed.edit.captured = captured.get<bool>();
    parsed.edit.seconds = seconds.get<double>();
    parsed.edit.template_hash = text_field(message, "template_hash", 256);
  } else if (type == "result") {
    parsed.kind = RunnerMessage::Kind::result;
    parsed.result = parse_slot(field(message, "image"));
  } else if (type == "finished") {
    parsed.kind = RunnerMessage::Kind::finished;
    parsed.status = text_field(message, "status", 32);
    if (parsed.status != "ok" && parsed.status != "cancelled" && parsed.status != "error" &&
        parsed.status != "bad_request" && parsed.status != "out_of_memory")
      fail("a finished message has an unknown status");
    parsed.text = text_field(message, "message");
  } else {
    fail("unknown message type '" + type + "'");
  }
  return parsed;
}

nlohmann::json run_message_to_json(const RunMessage& run) {
  return {{"type", "run"},
          {"plugin", run.plugin_path},
          {"parameters", run.parameters},
          {"image", slot_to_json(run.image)},
          {"mask", run.has_mask ? slot_to_json(run.mask) : nlohmann::json(nullptr)},
          {"model_dir", run.model_dir},
          {"cache_dir", run.cache_dir},
          {"device", run.device},
          {"threads", run.threads},
          {"memory_budget", run.memory_budget_bytes}};
}

RunMessage parse_run_message(const nlohmann::json& message) {
  if (!message.is_object() || text_field(message, "type", 32) != "run") fail("expected a run message");
  RunMessage run;
  run.plugin_path = text_field(message, "plugin", 4096);
  const auto& parameters = field(message, "parameters");
  if (!parameters.is_object() || parameters.size() > 256) fail("'parameters' is not an object of at most 256");
  for (const auto& [key, value] : parameters.items()) {
    if (!value.is_string()) fail("parameter '" + key + "' is not text");
    run.parameters[key] = value.get<std::string>();
  }
  run.image = parse_slot(field(message, "image"));
  const auto& mask = field(message, "mask");
  run.has_mask = !mask.is_null();
  if (run.has_mask) run.mask = parse_slot(mask);
  run.model_dir = text_field(message, "model_dir", 4096);
  run.cache_dir = text_field(message, "cache_dir", 4096);
  run.device = text_field(message, "device", 64);
  run.threads = int(integer_field(message, "threads", 0, 4096));
  run.memory_budget_bytes = integer_field(message, "memory_budget", 0, INT64_MAX);
  return run;
}

}  // namespace flashps::plugins::protocol
