// Catch2 v3 behind the v2 header the tests include (Debian 12 ships v2, Debian 13 v3):
// tests/CMakeLists.txt puts this folder first on the include path only when it finds v3, so the
// test files stay one source for both. It maps the v2 names the tests use onto v3's.
#pragma once
#include <catch2/catch_all.hpp>
#include <string>

namespace Catch {
// v2's string matchers lived in namespace Catch; v3 renamed Contains to ContainsSubstring (its
// Matchers::Contains is now the range matcher).
inline Matchers::StringContainsMatcher Contains(const std::string& text,
                                                CaseSensitive sensitivity = CaseSensitive::Yes) {
  return Matchers::ContainsSubstring(text, sensitivity);
}
using Matchers::EndsWith;
using Matchers::Equals;
using Matchers::Matches;
using Matchers::StartsWith;
using Matchers::VectorContains;
}  // namespace Catch

using Catch::Approx;  // v2 made it visible unqualified
