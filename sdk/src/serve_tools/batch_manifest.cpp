#include "serve_tools/batch_manifest.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/error.h"

namespace flashps::serve {
namespace {

const std::set<std::string> kKnownKeys = {"image", "mask", "output", "prompt", "prompt_embeds", "seed",
                                          "steps", "strength", "guidance", "cache"};

std::string text_field(const nlohmann::json& entry, const char* key, const std::string& where, bool required) {
  auto found = entry.find(key);
  if (found == entry.end()) {
    if (required) throw Error(where + ": missing \"" + key + "\"");
    return {};
  }
  if (!found->is_string()) throw Error(where + ": \"" + key + "\" must be a string");
  std::string value = found->get<std::string>();
  if (required && value.empty()) throw Error(where + ": \"" + key + "\" is empty");
  if (value.find('\0') != std::string::npos) throw Error(where + ": \"" + key + "\" contains a NUL character");
  return value;
}

double number_field(const nlohmann::json& entry, const char* key, const std::string& where, double fallback) {
  auto found = entry.find(key);
  if (found == entry.end()) return fallback;
  if (!found->is_number()) throw Error(where + ": \"" + key + "\" must be a number");
  return found->get<double>();
}

}  // namespace

BatchManifest parse_batch_manifest(const std::string& text, const std::string& source) {
  BatchManifest manifest;
  manifest.source = source;
  std::set<std::string> outputs;
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    const std::string where = source + ":" + std::to_string(number);
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    nlohmann::json entry;
    try {
      entry = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& error) {
      throw Error(where + ": not valid JSON (" + error.what() + ")");
    }
    if (!entry.is_object()) throw Error(where + ": each line must be a JSON object");
    for (const auto& [key, value] : entry.items())
      if (!kKnownKeys.count(key)) throw Error(where + ": unknown key \"" + key + "\"");
    BatchItem item;
    item.line = number;
    item.image = text_field(entry, "image", where, true);
    item.mask = text_field(entry, "mask", where, true);
    item.output = text_field(entry, "output", where, true);
    item.prompt = text_field(entry, "prompt", where, false);
    item.prompt_embeds = text_field(entry, "prompt_embeds", where, false);
    const double seed = number_field(entry, "seed", where, 0);
    if (!(seed >= 0 && seed <= 9007199254740992.0) || seed != static_cast<double>(static_cast<uint64_t>(seed)))
      throw Error(where + ": \"seed\" must be a non-negative integer");
    item.seed = static_cast<uint64_t>(seed);
    const double steps = number_field(entry, "steps", where, 0);  // 0: the model's recommendation
    if (!((steps >= 1 && steps <= 1000) || (steps == 0 && !entry.contains("steps"))) || steps != static_cast<int>(steps))
      throw Error(where + ": \"steps\" must be an integer from 1 to 1000");
    item.steps = static_cast<int>(steps);
    item.strength = number_field(entry, "strength", where, 1.0);
    if (!(item.strength > 0 && item.strength <= 1)) throw Error(where + ": \"strength\" must be in (0, 1]");
    if (entry.contains("guidance")) {
      const double guidance = number_field(entry, "guidance", where, 0);
      if (!(guidance >= 0 && guidance < 1000)) throw Error(where + ": \"guidance\" must be in [0, 1000)");
      item.guidance = guidance;
    }
    if (entry.contains("cache")) item.cache = text_field(entry, "cache", where, true);
    if (item.cache != "auto" && item.cache != "full" && item.cache != "kv" && item.cache != "hidden")
      throw Error(where + ": \"cache\" must be auto, full, kv or hidden");
    if (!outputs.insert(item.output).second)
      throw Error(where + ": output \"" + item.output + "\" is already written by an earlier line");
    manifest.items.push_back(std::move(item));
  }
  return manifest;
}

}  // namespace flashps::serve
