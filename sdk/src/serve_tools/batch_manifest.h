// `flashps batch` manifests: JSON Lines, one edit per line:
//   {"image": "in.jpg", "mask": "mask.png", "output": "out/in.png", "seed": 1, "steps": 8,
//    "strength": 1.0, "prompt": "...", "prompt_embeds": "embeds.safetensors", "cache": "auto"}
// image, mask and output are required; paths are used as written (relative to the working
// directory). Blank lines and lines starting with '#' are skipped. Errors name the file and line.
// Values are judged by the SDK's one set of rules (pipeline/edit_rules.h: steps 0..1000 where 0 is
// the model's recommendation, strength (0, 1], guidance 0..100 where < 0 is the model's default;
// cache by engine/cache_mode.h), as flashps_edit_params are. Parsing needs no LibTorch (a fuzz
// target runs it).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace flashps::serve {

struct BatchItem {
  int line = 0;
  std::string image, mask, output;
  std::string prompt, prompt_embeds;
  uint64_t seed = 0;
  int steps = 0;  // 0 (field absent): the model's recommended steps
  double strength = 1.0;
  std::optional<double> guidance;  // empty: the model's default
  std::string cache = "auto";  // auto | full | kv | hidden
};

struct BatchManifest {
  std::string source;  // file name, for messages
  std::vector<BatchItem> items;
};

// Throws Error("<source>:<line>: <problem>") on malformed JSON, missing or mistyped fields,
// unknown keys (typos would otherwise be silently ignored) and outputs listed twice.
BatchManifest parse_batch_manifest(const std::string& text, const std::string& source);

}  // namespace flashps::serve
