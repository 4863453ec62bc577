// The fixture folders of one kind (cases.json "kind": "single_file", "gguf", ...), whichever and
// however many are present: the fixtures are also run against regenerated variants.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/files/json_file.h"
#include "support/fixtures.h"

namespace flashps::test {

// Empty when there are no fixtures at all (the caller WARNs that it skips).
inline std::vector<std::filesystem::path> fixture_dirs_of_kind(const std::string& kind) {
  std::vector<std::filesystem::path> found;
  const auto root = fixtures_root();
  if (!root) return found;
  for (const auto& entry : std::filesystem::directory_iterator(*root)) {
    const auto cases = entry.path() / "cases.json";
    if (!std::filesystem::is_regular_file(cases)) continue;
    const nlohmann::json index = read_json_file(cases.string());
    if (index.is_object() && index.value("kind", "") == kind) found.push_back(entry.path());
  }
  return found;
}

}  // namespace flashps::test
