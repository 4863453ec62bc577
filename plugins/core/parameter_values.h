// A run's parameter values, parsed from text (--param key=value, a dialog, a runner message) and
// checked against the plugin's schema; what the parameter suite hands the plugin.
#ifndef FLASHPS_PLUGINS_PARAMETER_VALUES_H
#define FLASHPS_PLUGINS_PARAMETER_VALUES_H

#include <cstdint>
#include <map>
#include <string>

#include "flashps/plugin_host.hpp"

namespace flashps::plugins {

// A number as parameters and messages show it ("%.10g": 0.5, 100, 2147483647).
std::string format_number(double value);

struct ParameterValue {
  ParameterType type = ParameterType::integer;
  int64_t integer = 0;
  double number = 0;
  std::string text;  // text and choice values; the canonical text of every value
};

class ParameterValues {
 public:
  // Every parameter of `plugin`, the given ones parsed, the others at their defaults. Throws
  // PluginError(bad_request) naming the plugin, the key and what was wrong.
  static ParameterValues parse(const PluginInfo& plugin, const std::map<std::string, std::string>& given);

  const ParameterValue* find(const std::string& key) const;
  // key -> canonical text: what a runner is sent (parse() of it gives the same values).
  std::map<std::string, std::string> as_text() const;

 private:
  std::map<std::string, ParameterValue> values_;
};

}  // namespace flashps::plugins

#endif
