// Batch manifests: fields, defaults, and errors that name the file and line.
#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/diagnostics/error.h"
#include "serve_tools/batch_manifest.h"

using namespace flashps;
using namespace flashps::serve;

TEST_CASE("a manifest line without steps asks for the model's recommendation", "[serve]") {
  const BatchManifest manifest = parse_batch_manifest(
      "# comment\n"
      "{\"image\": \"a.jpg\", \"mask\": \"a.png\", \"output\": \"out/a.png\", \"seed\": 3}\n"
      "\n"
      "{\"image\": \"b.jpg\", \"mask\": \"b.png\", \"output\": \"out/b.png\", \"steps\": 8, \"strength\": 0.5}\n",
      "edits.jsonl");
  REQUIRE(manifest.items.size() == 2);
  CHECK(manifest.items[0].line == 2);
  CHECK(manifest.items[0].seed == 3);
  CHECK(manifest.items[0].steps == 0);
  CHECK(manifest.items[1].steps == 8);
  CHECK(manifest.items[1].strength == 0.5);
}

TEST_CASE("manifest values are judged by the SDK's one set of rules, naming file, line and key", "[serve]") {
  const auto line_with = [](const std::string& fields) {
    return "{\"image\": \"a.jpg\", \"mask\": \"a.png\", \"output\": \"o.png\"}\n"
           "{\"image\": \"a.jpg\", \"mask\": \"a.png\", \"output\": \"p.png\", " +
           fields + "}\n";
  };
  // The C API's messages (pipeline/edit_rules.h), with the manifest's key for the field.
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"\"steps\": 1001", "edits.jsonl:2: \"steps\" is 1001; it must be 0 (the model's recommendation) to 1000"},
      {"\"steps\": -3", "edits.jsonl:2: \"steps\" is -3; it must be 0 (the model's recommendation) to 1000"},
      {"\"steps\": 2.5", "edits.jsonl:2: \"steps\" must be a whole number"},
      {"\"strength\": 0", "edits.jsonl:2: \"strength\" is 0; it must be in (0, 1]"},
      {"\"guidance\": 101", "edits.jsonl:2: \"guidance\" is 101; it must be 0 to 100 (< 0: the model's default)"},
      {"\"cache\": \"sometimes\"", "edits.jsonl:2: \"cache\": unknown cache mode 'sometimes'"},
      {"\"seed\": -1", "edits.jsonl:2: \"seed\" must be a whole number from 0 to 18446744073709551615"},
  };
  for (const auto& [fields, message] : refused) {
    INFO(fields);
    CHECK_THROWS_WITH(parse_batch_manifest(line_with(fields), "edits.jsonl"), Catch::StartsWith(message));
  }
  // The same bounds as everywhere: 0 is the model's recommendation, a negative guidance its default.
  const BatchManifest manifest =
      parse_batch_manifest(line_with("\"steps\": 0, \"guidance\": -1, \"seed\": 18446744073709551615"), "e.jsonl");
  CHECK(manifest.items[1].steps == 0);
  CHECK_FALSE(manifest.items[1].guidance.has_value());
  CHECK(manifest.items[1].seed == 18446744073709551615ull);
}
