#include "serve_tools/batch_manifest.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/diagnostics/error.h"
#include "engine/cache_mode.h"
#include "pipeline/edit_rules.h"

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

// A whole number that fits an int (0 when absent: the model's recommendation).
int whole_field(const nlohmann::json& entry, const char* key, const std::string& where) {
  const double value = number_field(entry, key, where, 0);
  if (value != std::floor(value) || value < INT32_MIN || value > INT32_MAX)
    throw Error(where + ": \"" + key + "\" must be a whole number");
  return static_cast<int>(value);
}

uint64_t seed_field(const nlohmann::json& entry, const std::string& where) {
  const auto found = entry.find("seed");
  if (found == entry.end()) return 0;
  if (found->is_number_unsigned()) return found->get<uint64_t>();
  // A whole double (1e3) is taken while it is exact.
  if (found->is_number_float() && found->get<double>() >= 0 && found->get<double>() <= 9007199254740992.0 &&
      found->get<double>() == std::floor(found->get<double>()))
    return static_cast<uint64_t>(found->get<double>());
  throw Error(where + ": \"seed\" must be a whole number from 0 to 18446744073709551615");
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
    item.seed = seed_field(entry, where);
    // Fields converted as they are typed; the one set of rules judges their values.
    rules::EditSettings settings;
    settings.steps = whole_field(entry, "steps", where);
    settings.strength = number_field(entry, "strength", where, 1.0);
    settings.guidance_scale = number_field(entry, "guidance", where, -1.0);
    rules::check_edit_settings(settings, [&where](const std::string& field) {
      return where + ": \"" + (field == "guidance_scale" ? "guidance" : field) + "\"";
    });
    item.steps = settings.steps;
    item.strength = settings.strength;
    if (settings.guidance_scale >= 0) item.guidance = settings.guidance_scale;  // < 0: the model's default
    if (entry.contains("cache")) item.cache = text_field(entry, "cache", where, true);
    try {
      engine::cache_mode_from_name(item.cache);
    } catch (const Error& error) {
      throw Error(where + ": \"cache\": " + error.what());
    }
    if (!outputs.insert(item.output).second)
      throw Error(where + ": output \"" + item.output + "\" is already written by an earlier line");
    manifest.items.push_back(std::move(item));
  }
  return manifest;
}

}  // namespace flashps::serve
