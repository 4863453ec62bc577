// Locating the golden fixtures in ../shared/fixtures (override: FLASHPS_FIXTURES_DIR).
// A user's clone has no ../shared: tests that need fixtures then skip with a clear message.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "support/source_dir.h"

namespace flashps::test {

inline std::optional<std::filesystem::path> fixtures_root() {
  std::filesystem::path root;
  if (const char* env = std::getenv("FLASHPS_FIXTURES_DIR")) {
    root = env;
  } else {
    root = std::filesystem::path(source_dir()) / ".." / "shared" / "fixtures";
  }
  if (std::filesystem::is_directory(root)) return std::filesystem::canonical(root);
  return std::nullopt;
}

// Path of one fixture folder, or nullopt (the caller WARNs and returns: Catch2 v2 has no SKIP).
inline std::optional<std::filesystem::path> fixture_dir(const std::string& name) {
  auto root = fixtures_root();
  if (!root) return std::nullopt;
  auto dir = *root / name;
  if (!std::filesystem::is_directory(dir)) return std::nullopt;
  return dir;
}

}  // namespace flashps::test

// Use at the top of a TEST_CASE: skips it (with a visible warning) when the fixture is absent.
#define FLASHPS_REQUIRE_FIXTURE(var, name)                                                     \
  auto var##_optional = ::flashps::test::fixture_dir(name);                                     \
  if (!var##_optional) {                                                                        \
    WARN("SKIPPED: fixture '" << name << "' not found (set FLASHPS_FIXTURES_DIR or place "      \
                                  "../shared/fixtures beside the repository)");                 \
    return;                                                                                     \
  }                                                                                             \
  const std::filesystem::path var = *var##_optional
