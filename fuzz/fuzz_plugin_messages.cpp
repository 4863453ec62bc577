// libFuzzer target: what the plugin host reads from a runner, which shares its process with an
// untrusted plugin: frames (FrameReader), messages (parse_runner_message), the descriptors they
// carry (validate_descriptor) and parameter values against the schema that passed. Also the
// runner's parse of the host's run message. None of them may crash, hang or allocate without
// bound; refusals are exceptions.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "descriptor_json.h"
#include "parameter_values.h"
#include "runner_protocol.h"

namespace fpp = flashps::plugins;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte picks how the bytes arrive (reads of any size), as a socket may split them.
  const size_t chunk = 1 + data[0] % 97;
  fpp::protocol::FrameReader reader;
  try {
    for (size_t at = 1; at < size; at += chunk) {
      reader.feed(reinterpret_cast<const char*>(data) + at, std::min(chunk, size - at));
      nlohmann::json message;
      while (reader.next(&message)) {
        try {
          (void)fpp::protocol::parse_run_message(message);
        } catch (const std::exception&) {
        }
        fpp::protocol::RunnerMessage parsed;
        try {
          parsed = fpp::protocol::parse_runner_message(message);
        } catch (const fpp::protocol::ProtocolError&) {
          continue;
        }
        if (parsed.kind != fpp::protocol::RunnerMessage::Kind::descriptor) continue;
        try {
          const fpp::PluginInfo info = fpp::validate_descriptor(parsed.descriptor, "fuzz.so");
          std::map<std::string, std::string> given;
          for (const auto& spec : info.parameters) given[spec.key] = spec.default_value();
          (void)fpp::ParameterValues::parse(info, given);  // defaults must always parse
          if (!info.parameters.empty()) {
            given[info.parameters[0].key] = std::string(reinterpret_cast<const char*>(data), std::min<size_t>(size, 64));
            try {
              (void)fpp::ParameterValues::parse(info, given);
            } catch (const fpp::PluginError&) {
            }
          }
        } catch (const std::runtime_error&) {
        }
      }
    }
  } catch (const fpp::protocol::ProtocolError&) {
  }
  return 0;
}
