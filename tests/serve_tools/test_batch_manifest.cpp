// Batch manifests: fields, defaults, and errors that name the file and line.
#include <catch2/catch.hpp>

#include "core/error.h"
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

TEST_CASE("manifest steps outside 1..1000 are refused with file and line", "[serve]") {
  for (const char* steps : {"0", "1001", "2.5", "-3"}) {
    INFO(steps);
    const std::string text = "{\"image\": \"a.jpg\", \"mask\": \"a.png\", \"output\": \"o.png\"}\n"
                             "{\"image\": \"a.jpg\", \"mask\": \"a.png\", \"output\": \"p.png\", \"steps\": " +
                             std::string(steps) + "}\n";
    CHECK_THROWS_WITH(parse_batch_manifest(text, "edits.jsonl"),
                      Catch::Contains("edits.jsonl") && Catch::Contains("2") && Catch::Contains("steps"));
  }
}
