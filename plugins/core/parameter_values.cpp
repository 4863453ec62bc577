#include "parameter_values.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace flashps::plugins {
std::string format_number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.10g", value);
  return text;
}

namespace {

bool parse_integer(const std::string& text, int64_t* value) {
  if (text.empty() || text.size() > 24) return false;
  errno = 0;
  char* end = nullptr;
  const long long parsed = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end != text.c_str() + text.size()) return false;
  *value = parsed;
  return true;
}

bool parse_number(const std::string& text, double* value) {
  if (text.empty() || text.size() > 64) return false;
  errno = 0;
  char* end = nullptr;
  const double parsed = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(parsed)) return false;
  *value = parsed;
  return true;
}

bool parse_boolean(const std::string& text, bool* value) {
  if (text == "1" || text == "true" || text == "yes" || text == "on") return *value = true, true;
  if (text == "0" || text == "false" || text == "no" || text == "off") return *value = false, true;
  return false;
}

ParameterValue value_from_text(const PluginInfo& plugin, const ParameterSpec& spec, const std::string& text) {
  const auto refuse = [&](const std::string& why) {
    throw PluginError(Failure::bad_request, "plugin " + plugin.name + ": parameter " + spec.key + ": " + why);
  };
  const std::string range = format_number(spec.minimum) + ".." + format_number(spec.maximum);
  ParameterValue value;
  value.type = spec.type;
  switch (spec.type) {
    case ParameterType::integer:
      if (!parse_integer(text, &value.integer)) refuse("'" + text + "' is not a whole number");
      if (double(value.integer) < spec.minimum || double(value.integer) > spec.maximum)
        refuse(text + " is outside " + range);
      value.number = double(value.integer);
      value.text = std::to_string(value.integer);
      break;
    case ParameterType::number:
      if (!parse_number(text, &value.number)) refuse("'" + text + "' is not a number");
      if (value.number < spec.minimum || value.number > spec.maximum) refuse(text + " is outside " + range);
      value.text = format_number(value.number);
      break;
    case ParameterType::boolean: {
      bool on = false;
      if (!parse_boolean(text, &on)) refuse("'" + text + "' is not true or false");
      value.integer = on ? 1 : 0;
      value.number = value.integer;
      value.text = on ? "true" : "false";
      break;
    }
    case ParameterType::text:
      if (text.size() > spec.maximum) refuse("longer than " + format_number(spec.maximum) + " bytes");
      if (text.find('\0') != std::string::npos) refuse("holds a NUL byte");
      value.text = text;
      break;
    case ParameterType::choice: {
      bool known = false;
      std::string listed;
      for (const auto& choice : spec.choices) {
        known = known || choice == text;
        listed += (listed.empty() ? "" : ", ") + choice;
      }
      if (!known) refuse("'" + text + "' is not one of " + listed);
      value.text = text;
      break;
    }
  }
  return value;
}

}  // namespace

std::string ParameterSpec::default_value() const {
  switch (type) {
    case ParameterType::integer: return std::to_string(static_cast<int64_t>(default_number));
    case ParameterType::number: return format_number(default_number);
    case ParameterType::boolean: return default_number != 0 ? "true" : "false";
    case ParameterType::text:
    case ParameterType::choice: return default_text;
  }
  return "";
}

ParameterValues ParameterValues::parse(const PluginInfo& plugin, const std::map<std::string, std::string>& given) {
  ParameterValues values;
  for (const auto& [key, text] : given) {
    bool known = false;
    for (const auto& spec : plugin.parameters) known = known || spec.key == key;
    if (!known) {
      std::string keys;
      for (const auto& spec : plugin.parameters) keys += (keys.empty() ? "" : ", ") + spec.key;
      throw PluginError(Failure::bad_request, "plugin " + plugin.name + " has no parameter '" + key + "'" +
                                                  (keys.empty() ? " (it takes none)" : " (it takes: " + keys + ")"));
    }
  }
  for (const auto& spec : plugin.parameters) {
    const auto found = given.find(spec.key);
    values.values_[spec.key] = value_from_text(plugin, spec, found != given.end() ? found->second : spec.default_value());
  }
  return values;
}

const ParameterValue* ParameterValues::find(const std::string& key) const {
  const auto found = values_.find(key);
  return found == values_.end() ? nullptr : &found->second;
}

std::map<std::string, std::string> ParameterValues::as_text() const {
  std::map<std::string, std::string> text;
  for (const auto& [key, value] : values_) text[key] = value.text;
  return text;
}

}  // namespace flashps::plugins
