// Runs the tokenizer golden fixtures, exactly (no tolerance): CLIPTokenizer (clip_tokenizer: the
// raw BPE ids and the padded input_ids with SD 1's and SD 2's padding) and T5Tokenizer
// (t5_tokenizer: FluxPipeline's padded, truncated input_ids and attention mask per prompt).
#include <ATen/ATen.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/diagnostics/error.h"
#include "core/files/json_file.h"
#include "dev/fixture_runners.h"
#include "models/clip/clip_tokenizer.h"
#include "models/t5/t5_tokenizer.h"

namespace flashps::dev {
namespace {

at::Tensor as_tensor(const std::vector<int64_t>& ids) {
  return at::tensor(at::ArrayRef<int64_t>(ids), at::kLong);
}

}  // namespace

FixtureReport run_clip_tokenizer_fixture(const FixtureSet& set) {
  FixtureReport report;
  report.dir = set.dir;
  report.component = set.component;
  const ClipTokenizer tokenizer = ClipTokenizer::load(set.dir);
  for (const FixtureCase& fixture_case : set.cases) {
    try {
      if (fixture_case.call != "tokenize") throw Error("unknown call '" + fixture_case.call + "' for a tokenizer");
      const std::string text = fixture_case.inputs.at("text").get<std::string>();
      const int max_length = fixture_case.inputs.value("max_length", 77);
      const TokenizedPrompt padded_with_eos = tokenizer.tokenize(text, max_length);
      // SD 2's tokenizer pads with "!", id 0 of CLIP's vocabulary.
      const TokenizedPrompt padded_with_zero = tokenizer.tokenize(text, max_length, /*pad_token_id=*/0);
      const std::map<std::string, at::Tensor> actual = {
          {"ids", as_tensor(padded_with_eos.ids)},
          {"input_ids_pad_eos", as_tensor(padded_with_eos.input_ids)},
          {"input_ids_pad_zero", as_tensor(padded_with_zero.input_ids)}};
      // Expected ids may be stored [1, L] or [L]: compared by value, flattened.
      CaseResult result;
      result.name = fixture_case.name;
      for (const auto& [output, key] : fixture_case.outputs) {
        const auto found = actual.find(output);
        result.outputs.push_back(compare_output(output, found == actual.end() ? at::Tensor() : found->second,
                                                set.tensor(key).reshape({-1}), 0, 0));
      }
      report.cases.push_back(std::move(result));
    } catch (const std::exception& error) {
      report.cases.push_back(failed_case(fixture_case.name, error));
    }
  }
  return report;
}

FixtureReport run_t5_tokenizer_fixture(const std::string& dir) {
  namespace fs = std::filesystem;
  const std::string cases_path = (fs::path(dir) / "cases.json").string();
  const nlohmann::json fixture = read_json_file(cases_path);
  FixtureReport report;
  report.dir = dir;
  report.component = "T5Tokenizer";
  try {
    const T5Tokenizer tokenizer =
        T5Tokenizer::load((fs::path(dir) / fixture.value("model", std::string("spiece.model"))).string());
    const nlohmann::json& cases = fixture.at("cases");
    for (size_t index = 0; index < cases.size(); ++index) {
      const nlohmann::json& expected = cases[index];
      const int max_length = expected.at("max_length").get<int>();
      const std::string name = expected.value("name", "prompt_" + std::to_string(index)) + "@" +
                               std::to_string(max_length);
      try {
        const T5Tokenizer::Encoded encoded = tokenizer.encode(expected.at("text").get<std::string>(), max_length);
        CaseResult result;
        result.name = name;
        result.outputs.push_back(compare_output("input_ids", as_tensor(encoded.input_ids),
                                                as_tensor(expected.at("input_ids").get<std::vector<int64_t>>()), 0, 0));
        result.outputs.push_back(
            compare_output("attention_mask", as_tensor(encoded.attention_mask),
                           as_tensor(expected.at("attention_mask").get<std::vector<int64_t>>()), 0, 0));
        report.cases.push_back(std::move(result));
      } catch (const std::exception& error) {
        report.cases.push_back(failed_case(name, error));
      }
    }
  } catch (const nlohmann::json::exception& error) {
    throw Error(cases_path + ": malformed tokenizer cases: " + error.what());
  }
  return report;
}

}  // namespace flashps::dev
