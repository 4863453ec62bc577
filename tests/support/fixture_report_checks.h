// Checks on a fixture runner's report (dev/fixture_runners.h): every case ran and every output is
// within its tolerance, with the errors in the message when not.
#pragma once
#include <catch2/catch.hpp>

#include "dev/fixture_set.h"

namespace flashps::test {

inline void require_all_cases_pass(const dev::FixtureReport& report) {
  REQUIRE_FALSE(report.cases.empty());
  for (const auto& fixture_case : report.cases) {
    INFO("case " << fixture_case.name << " " << fixture_case.error);
    for (const auto& output : fixture_case.outputs) {
      INFO(output.output << ": max |error| " << output.max_abs_error << ", worst error/allowed " << output.worst_ratio);
      CHECK(output.passed);
    }
    CHECK(fixture_case.passed());
  }
  REQUIRE(report.passed());
}

}  // namespace flashps::test
