#include "descriptor_json.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <stdexcept>

#include "parameter_values.h"

namespace flashps::plugins {
namespace {

constexpr size_t kMaxParameters = 64;
constexpr size_t kMaxTextField = 1024;
constexpr double kMaxStringLength = 1 << 20;
constexpr uint32_t kKnownFlags = FLASHPS_PLUGIN_NEEDS_MASK | FLASHPS_PLUGIN_NEEDS_MODEL | FLASHPS_PLUGIN_TAKES_TEXT;

[[noreturn]] void fail(const std::string& message) { throw std::runtime_error(message); }

// A C string the plugin gave, bounded so that a missing terminator cannot run on for ever.
nlohmann::json text_or_null(const char* text) {
  if (!text) return nullptr;
  const size_t length = strnlen(text, kMaxTextField + 1);
  if (length > kMaxTextField) fail("a text field is longer than " + std::to_string(kMaxTextField) + " bytes");
  return std::string(text, length);
}

nlohmann::json spec_to_json(const flashps_parameter_spec& spec) {
  return {{"key", text_or_null(spec.key)},
          {"label", text_or_null(spec.label)},
          {"description", text_or_null(spec.description)},
          {"type", spec.type},
          {"minimum", spec.minimum},
          {"maximum", spec.maximum},
          {"default_number", spec.default_number},
          {"default_text", text_or_null(spec.default_text)},
          {"choices", text_or_null(spec.choices)}};
}

std::string required_text(const nlohmann::json& object, const char* field, size_t max_length, const std::string& where) {
  const auto found = object.find(field);
  if (found == object.end() || !found->is_string() || found->get_ref<const std::string&>().empty())
    fail(where + ": '" + field + "' is missing or empty");
  const std::string& text = found->get_ref<const std::string&>();
  if (text.size() > max_length) fail(where + ": '" + field + "' is longer than " + std::to_string(max_length) + " bytes");
  for (unsigned char c : text)
    if (c < 0x20) fail(where + ": '" + field + "' holds a control character");
  return text;
}

std::string optional_text(const nlohmann::json& object, const char* field, const std::string& where) {
  const auto found = object.find(field);
  if (found == object.end() || found->is_null()) return "";
  if (!found->is_string()) fail(where + ": '" + field + "' is not text");
  if (found->get_ref<const std::string&>().size() > kMaxTextField) fail(where + ": '" + field + "' is too long");
  return found->get<std::string>();
}

double number(const nlohmann::json& object, const char* field, const std::string& where) {
  const auto found = object.find(field);
  if (found == object.end() || !found->is_number()) fail(where + ": '" + field + "' is missing or not a number");
  const double value = found->get<double>();
  if (!std::isfinite(value)) fail(where + ": '" + field + "' is not finite");
  return value;
}

bool is_identifier(const std::string& text, bool dots_and_dashes) {
  if (text.empty() || text.size() > 64 || !(text[0] >= 'a' && text[0] <= 'z')) return false;
  for (char c : text) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!plain && !(dots_and_dashes && (c == '.' || c == '-'))) return false;
  }
  return true;
}

std::vector<std::string> split_choices(const std::string& choices) {
  std::vector<std::string> values;
  size_t start = 0;
  while (true) {
    const size_t bar = choices.find('|', start);
    values.push_back(choices.substr(start, bar == std::string::npos ? std::string::npos : bar - start));
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
  return values;
}

ParameterSpec validate_spec(const nlohmann::json& json, const std::string& plugin_where, size_t index) {
  std::string where = plugin_where + ": parameter " + std::to_string(index + 1);
  if (!json.is_object()) fail(where + " is not an object");
  ParameterSpec spec;
  const auto key = json.find("key");
  if (key == json.end() || !key->is_string() || !is_identifier(key->get<std::string>(), false))
    fail(where + ": its key must be 1-64 characters of [a-z0-9_] starting with a letter" +
         (key != json.end() && key->is_string() ? " (it is '" + key->get<std::string>() + "')" : ""));
  spec.key = key->get<std::string>();
  where = plugin_where + ": parameter '" + spec.key + "'";
  spec.label = optional_text(json, "label", where);
  if (spec.label.empty()) spec.label = spec.key;
  spec.description = optional_text(json, "description", where);
  const auto type = json.find("type");
  if (type == json.end() || !type->is_number_integer() || type->get<int64_t>() < 1 || type->get<int64_t>() > 5)
    fail(where + ": its type must be FLASHPS_PARAMETER_INT, FLOAT, BOOL, STRING or CHOICE (1-5)");
  spec.type = static_cast<ParameterType>(type->get<int>());
  spec.minimum = number(json, "minimum", where);
  spec.maximum = number(json, "maximum", where);
  spec.default_number = number(json, "default_number", where);
  spec.default_text = optional_text(json, "default_text", where);
  switch (spec.type) {
    case ParameterType::integer:
    case ParameterType::number: {
      if (spec.minimum > spec.maximum)
        fail(where + ": its minimum " + format_number(spec.minimum) + " is above its maximum " +
             format_number(spec.maximum));
      if (spec.default_number < spec.minimum || spec.default_number > spec.maximum)
        fail(where + ": its default " + format_number(spec.default_number) + " is outside " +
             format_number(spec.minimum) + ".." + format_number(spec.maximum));
      const bool integral = std::floor(spec.minimum) == spec.minimum && std::floor(spec.maximum) == spec.maximum &&
                            std::floor(spec.default_number) == spec.default_number;
      if (spec.type == ParameterType::integer && !integral)
        fail(where + ": an integer parameter needs whole-number minimum, maximum and default");
      if (spec.type == ParameterType::integer && (std::fabs(spec.minimum) > 9e15 || std::fabs(spec.maximum) > 9e15))
        fail(where + ": its range is beyond what a double holds exactly");
      break;
    }
    case ParameterType::boolean:
      if (spec.default_number != 0 && spec.default_number != 1) fail(where + ": a BOOL default must be 0 or 1");
      break;
    case ParameterType::text:
      if (spec.maximum < 0 || spec.maximum > kMaxStringLength)
        fail(where + ": its maximum length must be 0 (4096) to " + std::to_string(int(kMaxStringLength)));
      if (spec.maximum == 0) spec.maximum = 4096;
      if (spec.default_text.size() > spec.maximum) fail(where + ": its default is longer than its maximum");
      break;
    case ParameterType::choice: {
      const std::string choices = optional_text(json, "choices", where);
      if (choices.empty()) fail(where + ": a CHOICE parameter needs choices (\"a|b|c\")");
      spec.choices = split_choices(choices);
      std::set<std::string> seen;
      for (const auto& choice : spec.choices)
        if (choice.empty() || !seen.insert(choice).second)
          fail(where + ": its choices \"" + choices + "\" hold an empty or repeated value");
      if (!seen.count(spec.default_text))
        fail(where + ": its default \"" + spec.default_text + "\" is not one of \"" + choices + "\"");
      break;
    }
  }
  return spec;
}

}  // namespace

nlohmann::json descriptor_to_json(const flashps_plugin_descriptor* descriptor) {
  if (!descriptor) fail("its flashps_plugin_entry returned no descriptor");
  if (descriptor->struct_size < offsetof(flashps_plugin_descriptor, main) + sizeof(descriptor->main))
    fail("its descriptor's struct_size (" + std::to_string(descriptor->struct_size) +
         ") is smaller than version 1's: set it to sizeof(flashps_plugin_descriptor)");
  nlohmann::json json = {{"abi_version", descriptor->abi_version},
                         {"name", text_or_null(descriptor->name)},
                         {"title", text_or_null(descriptor->title)},
                         {"version", text_or_null(descriptor->version)},
                         {"vendor", text_or_null(descriptor->vendor)},
                         {"category", text_or_null(descriptor->category)},
                         {"description", text_or_null(descriptor->description)},
                         {"flags", descriptor->flags},
                         {"has_main", descriptor->main != nullptr},
                         {"parameters", nlohmann::json::array()}};
  if (descriptor->parameter_count > kMaxParameters)
    fail("it declares " + std::to_string(descriptor->parameter_count) + " parameters (at most " +
         std::to_string(kMaxParameters) + ")");
  if (descriptor->parameter_count > 0 && !descriptor->parameters) fail("its parameters pointer is NULL");
  // Specs are an array of the plugin's own struct size, which grows with later ABIs.
  const size_t stride = descriptor->parameter_count > 0 ? descriptor->parameters[0].struct_size : 0;
  const size_t version_1_size = offsetof(flashps_parameter_spec, choices) + sizeof(const char*);
  for (uint32_t i = 0; i < descriptor->parameter_count; ++i) {
    const auto* spec = reinterpret_cast<const flashps_parameter_spec*>(
        reinterpret_cast<const char*>(descriptor->parameters) + i * stride);
    if (spec->struct_size < version_1_size || spec->struct_size != stride || stride > 4096)
      fail("parameter " + std::to_string(i + 1) + ": struct_size " + std::to_string(spec->struct_size) +
           " is not sizeof(flashps_parameter_spec) (every spec needs it, all equal)");
    json["parameters"].push_back(spec_to_json(*spec));
  }
  return json;
}

PluginInfo validate_descriptor(const nlohmann::json& json, const std::string& path) {
  if (!json.is_object()) fail("its descriptor is not an object");
  PluginInfo info;
  info.path = path;
  const auto abi = json.find("abi_version");
  if (abi == json.end() || !abi->is_number_unsigned() || abi->get<uint64_t>() == 0)
    fail("its descriptor has no ABI version: set abi_version to FLASHPS_PLUGIN_ABI_VERSION");
  if (abi->get<uint64_t>() > FLASHPS_PLUGIN_ABI_VERSION)
    fail("it was built for plugin ABI " + std::to_string(abi->get<uint64_t>()) + "; this FlashPS hosts ABI " +
         std::to_string(FLASHPS_PLUGIN_ABI_VERSION) + " and older: update FlashPS to use it");
  info.abi_version = static_cast<uint32_t>(abi->get<uint64_t>());
  const auto name = json.find("name");
  if (name == json.end() || !name->is_string() || !is_identifier(name->get<std::string>(), true))
    fail("its name must be 1-64 characters of [a-z0-9._-] starting with a letter, like \"acme.posterize\"" +
         (name != json.end() && name->is_string() ? std::string(" (it is '") + name->get<std::string>() + "')" : ""));
  info.name = name->get<std::string>();
  const std::string where = "plugin " + info.name;
  info.title = required_text(json, "title", 128, where);
  info.version = required_text(json, "version", 64, where);
  info.vendor = required_text(json, "vendor", 128, where);
  info.category = required_text(json, "category", 64, where);
  info.description = optional_text(json, "description", where);
  const auto flags = json.find("flags");
  if (flags == json.end() || !flags->is_number_unsigned() || (flags->get<uint64_t>() & ~uint64_t(kKnownFlags)))
    fail(where + ": its flags hold bits this ABI does not define");
  const uint64_t flag_bits = flags->get<uint64_t>();
  info.needs_mask = flag_bits & FLASHPS_PLUGIN_NEEDS_MASK;
  info.needs_model = flag_bits & FLASHPS_PLUGIN_NEEDS_MODEL;
  info.takes_text = flag_bits & FLASHPS_PLUGIN_TAKES_TEXT;
  const auto has_main = json.find("has_main");
  if (has_main == json.end() || !has_main->is_boolean() || !has_main->get<bool>())
    fail(where + ": its descriptor has no main function");
  const auto parameters = json.find("parameters");
  if (parameters == json.end() || !parameters->is_array() || parameters->size() > kMaxParameters)
    fail(where + ": its parameters are missing or more than " + std::to_string(kMaxParameters));
  std::set<std::string> keys;
  for (size_t i = 0; i < parameters->size(); ++i) {
    ParameterSpec spec = validate_spec((*parameters)[i], where, i);
    if (!keys.insert(spec.key).second) fail(where + ": two parameters are called '" + spec.key + "'");
    info.parameters.push_back(std::move(spec));
  }
  return info;
}

}  // namespace flashps::plugins
