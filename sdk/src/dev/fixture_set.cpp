#include "dev/fixture_set.h"

#include <ATen/ATen.h>

#include <filesystem>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "core/files/tensor_io.h"

namespace flashps::dev {

FixtureSet load_fixture_set(const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) throw Error(dir + ": not a fixture folder (no such directory)");
  FixtureSet set;
  set.dir = dir;
  const std::string cases_path = (fs::path(dir) / "cases.json").string();
  nlohmann::json cases = read_json_file(cases_path);
  try {
    // Checkpoint fixtures (single files, GGUF) name several components, each case its own.
    set.components = cases.value("components", nlohmann::json::object());
    set.component = set.components.empty() ? cases.at("component").get<std::string>() : std::string();
    set.weights = cases.value("weights", "");
    set.checkpoint = cases.value("checkpoint", "");
    for (const auto& entry : cases.at("cases")) {
      FixtureCase fixture_case;
      fixture_case.name = entry.at("name").get<std::string>();
      fixture_case.call = entry.value("call", "forward");
      fixture_case.inputs = entry.at("inputs");
      for (const auto& [output, key] : entry.at("outputs").items())
        fixture_case.outputs[output] = key.get<std::string>();
      fixture_case.atol = entry.value("atol", 0.0);
      fixture_case.rtol = entry.value("rtol", 0.0);
      fixture_case.component = entry.value("component", "");
      fixture_case.weights = entry.value("weights", "");
      set.cases.push_back(std::move(fixture_case));
    }
  } catch (const nlohmann::json::exception& error) {
    throw Error(cases_path + ": malformed cases: " + error.what());
  }
  const fs::path config_path = fs::path(dir) / "config.json";
  if (fs::exists(config_path)) set.config = read_json_file(config_path.string());
  set.tensors = load_safetensors((fs::path(dir) / "cases.safetensors").string());
  return set;
}

const at::Tensor& FixtureSet::tensor(const std::string& key) const {
  auto found = tensors.find(key);
  if (found == tensors.end()) throw Error(dir + "/cases.safetensors: no tensor '" + key + "'");
  return found->second;
}

at::Tensor FixtureSet::input_tensor(const FixtureCase& fixture_case,
                                    const std::string& argument) const {
  if (!fixture_case.inputs.contains(argument))
    throw Error(dir + ": case '" + fixture_case.name + "' has no input '" + argument + "'");
  const auto& value = fixture_case.inputs.at(argument);
  if (value.is_null()) return at::Tensor();
  if (!value.is_string())
    throw Error(dir + ": case '" + fixture_case.name + "' input '" + argument +
                "' is not a tensor key");
  return tensor(value.get<std::string>());
}

OutputComparison compare_output(const std::string& output, const at::Tensor& actual,
                                const at::Tensor& expected, double atol, double rtol) {
  OutputComparison result;
  result.output = output;
  if (!actual.defined() || actual.sizes() != expected.sizes()) {
    result.shape_matches = false;
    result.passed = false;
    result.max_abs_error = std::numeric_limits<double>::infinity();
    result.worst_ratio = std::numeric_limits<double>::infinity();
    return result;
  }
  at::Tensor a = actual.detach().to(at::kCPU, at::kDouble);
  at::Tensor e = expected.to(at::kDouble);
  at::Tensor error = (a - e).abs();
  at::Tensor allowed = atol + rtol * e.abs();
  result.max_abs_error = error.numel() ? error.max().item<double>() : 0.0;
  // An exact match needs no allowance: 0/0 counts as 0 (exact fixtures, tokenizers, have
  // atol = rtol = 0), any other error over a zero allowance as infinite, NaN stays NaN.
  const at::Tensor ratio = at::where(error == 0, at::zeros_like(error), error / allowed);
  result.worst_ratio = error.numel() ? ratio.max().item<double>() : 0.0;
  // NaN compares false, so a NaN output fails.
  result.passed = error.numel() == 0 || (result.worst_ratio <= 1.0);
  return result;
}

bool CaseResult::passed() const {
  if (!error.empty() || outputs.empty()) return false;
  for (const auto& output : outputs)
    if (!output.passed) return false;
  return true;
}

bool FixtureReport::passed() const {
  if (cases.empty()) return false;
  for (const auto& fixture_case : cases)
    if (!fixture_case.passed()) return false;
  return true;
}

}  // namespace flashps::dev
