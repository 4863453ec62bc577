// A golden fixture folder (see ../shared/fixtures/README.md): config.json, weights, cases.json
// and cases.safetensors. Shared by the test suite and `flashps dev run-fixture`.
#pragma once
#include <ATen/Tensor.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace flashps::dev {

struct FixtureCase {
  std::string name;
  std::string call;                           // "forward", "encode", "decode", "tokenize"
  nlohmann::json inputs;                      // argument -> tensor key, number, bool or null
  std::map<std::string, std::string> outputs; // output name -> tensor key
  double atol = 0;
  double rtol = 0;
  std::string component;  // checkpoint fixtures: a key of FixtureSet::components
  std::string weights;    // checkpoint fixtures: the file of the folder this case loads
};

struct FixtureSet {
  std::string dir;
  std::string component;  // "_class_name" of the model, e.g. "FluxTransformer2DModel"
  std::string weights;    // weights file name inside dir
  std::string checkpoint;  // checkpoint fixtures: the file every case without its own `weights` loads
  nlohmann::json config;  // config.json
  nlohmann::json components;  // checkpoint fixtures: name -> {"_class_name", "config", ...}
  std::vector<FixtureCase> cases;
  std::map<std::string, at::Tensor> tensors;  // cases.safetensors

  // Tensor input `argument` of `fixture_case`, or an undefined tensor when the input is null.
  // Throws Error if the input is missing or not a tensor key.
  at::Tensor input_tensor(const FixtureCase& fixture_case, const std::string& argument) const;
  const at::Tensor& tensor(const std::string& key) const;  // throws Error if absent
};

FixtureSet load_fixture_set(const std::string& dir);

struct OutputComparison {
  std::string output;
  double max_abs_error = 0;    // max |actual - expected|
  double worst_ratio = 0;      // max |actual - expected| / (atol + rtol*|expected|); <= 1 passes
  bool shape_matches = true;
  bool passed = false;
};

// torch.allclose semantics: |actual - expected| <= atol + rtol * |expected| for every element.
OutputComparison compare_output(const std::string& output, const at::Tensor& actual,
                                const at::Tensor& expected, double atol, double rtol);

struct CaseResult {
  std::string name;
  std::vector<OutputComparison> outputs;
  std::string error;  // non-empty if the case could not run
  bool passed() const;
};

struct FixtureReport {
  std::string dir;
  std::string component;
  std::vector<CaseResult> cases;
  // Why no case ran: a fixture kind ("kind" in cases.json) for a capability this build does not
  // have yet; empty when the cases ran.
  std::string skipped;
  bool passed() const;
};

// Runs every case of a fixture folder of any supported component (model fixtures and the
// schedulers folder). Throws Error for an unreadable folder or an unsupported component. Kinds of
// fixtures for capabilities not built yet are reported as skipped, with the reason.
FixtureReport run_fixture(const std::string& dir);

}  // namespace flashps::dev
