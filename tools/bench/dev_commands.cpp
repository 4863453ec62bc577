// `flashps-bench dev run-fixture DIR` (also `flashps dev ...`): runs any golden fixture folder and prints per-case errors.
#include <cstdio>
#include <iostream>

#include "developer_commands.h"
#include "dev/fixture_set.h"

namespace flashps::bench_tool {

void add_dev_commands(CLI::App& app, CommandAction& action) {
  CLI::App* dev = app.add_subcommand("dev", "Developer tools");
  dev->require_subcommand(1);
  CLI::App* run_fixture = dev->add_subcommand(
      "run-fixture", "Run a golden fixture folder (cases.json format) and compare every output");
  static std::string fixture_dir;
  run_fixture->add_option("dir", fixture_dir, "Fixture folder")->required();
  run_fixture->callback([&action] {
    action = [] {
      dev::FixtureReport report = dev::run_fixture(fixture_dir);
      std::cout << report.component << " (" << report.dir << ")\n";
      for (const auto& result : report.cases) {
        if (!result.error.empty()) {
          std::cout << "  " << result.name << ": ERROR " << result.error << "\n";
          continue;
        }
        for (const auto& output : result.outputs) {
          std::printf("  %-28s %-22s max_abs_err %.3g  (%.2f of tolerance)  %s\n",
                      result.name.c_str(), output.output.c_str(), output.max_abs_error,
                      output.worst_ratio, output.passed ? "PASS" : "FAIL");
        }
      }
      const bool passed = report.passed();
      std::cout << (passed ? "PASS" : "FAIL") << ": " << report.cases.size() << " cases\n";
      return passed ? 0 : 1;
    };
  });
}

}  // namespace flashps::bench_tool
