// The C API's batch manifests (flashps/engine.h): validation, runs with resume, failures, the
// JSON report and cancellation.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "api/engine_test_support.h"
#include "core/image/image.h"
#include "flashps/flashps.h"
#include "flashps/flashps.hpp"
#include "support/tiny_pipeline.h"

using namespace flashps::test;

namespace {

struct Failure {
  int line;
  std::string output, error;
};

struct Observed {
  std::vector<Failure> failures;
  std::vector<std::string> progress;
  int cancel_when_resolved = -1;  // answer 0 once this many items resolved (calls repeat while edits run)
};

void on_failure(int line, const char* output, const char* error, void* user_data) {
  static_cast<Observed*>(user_data)->failures.push_back({line, output, error});
}

int on_progress(const char* stage, int step, int total, double, void* user_data) {
  auto* observed = static_cast<Observed*>(user_data);
  observed->progress.push_back(std::string(stage) + " " + std::to_string(step) + "/" + std::to_string(total));
  return observed->cancel_when_resolved >= 0 && step >= observed->cancel_when_resolved ? 0 : 1;
}

// Three edits of a written image and mask; the third names a mask that does not exist.
std::string write_manifest(const TempDir& dir, int steps = 1) {
  flashps::write_image(dir.file("in.png"), gradient_image(32, 32));
  flashps::write_image(dir.file("mask.png"), box_mask(32, 32, 4, 4, 12));
  const std::string manifest = dir.file("batch.jsonl");
  std::ofstream out(manifest);
  auto line = [&](const std::string& mask, const std::string& output, int seed, const std::string& extra = "") {
    out << "{\"image\": \"" << dir.file("in.png") << "\", \"mask\": \"" << dir.file(mask) << "\", \"output\": \""
        << dir.file(output) << "\", \"seed\": " << seed << ", \"steps\": " << steps << extra << "}\n";
  };
  out << "# a comment line\n";
  line("mask.png", "out/a.png", 1);
  line("mask.png", "out/b.png", 2, ", \"prompt\": \"a cat\"");
  line("missing-mask.png", "out/c.png", 3);
  return manifest;
}

flashps_batch_summary summary_struct() {
  flashps_batch_summary summary{};
  summary.struct_size = sizeof(summary);
  return summary;
}

}  // namespace

TEST_CASE("batch API: validate counts items, names file:line, tells missing from malformed", "[api][batch_api]") {
  TempDir dir;
  const std::string manifest = write_manifest(dir);
  int items = -1;
  REQUIRE(flashps_batch_validate(manifest.c_str(), &items) == FLASHPS_OK);
  CHECK(items == 3);
  CHECK(flashps_batch_validate(manifest.c_str(), nullptr) == FLASHPS_OK);
  CHECK(last_error().empty());

  std::ofstream(manifest, std::ios::app) << "{\"image\": \"a.png\", \"mask\": \"m.png\"}\n";  // no output
  CHECK(flashps_batch_validate(manifest.c_str(), &items) == FLASHPS_CORRUPT_DATA);
  CHECK_THAT(last_error(), Catch::Contains(manifest + ":5") && Catch::Contains("output"));
  const std::string broken = dir.file("broken.jsonl");
  std::ofstream(broken) << "{\"image\": \"a.png\", \"mask\": \"m.png\", \"output\": \"o.png\"}\n{not json\n";
  CHECK(flashps_batch_validate(broken.c_str(), &items) == FLASHPS_CORRUPT_DATA);
  CHECK_THAT(last_error(), Catch::Contains(broken + ":2") && Catch::Contains("not valid JSON"));

  CHECK(flashps_batch_validate(dir.file("none.jsonl").c_str(), &items) == FLASHPS_NOT_FOUND);
  CHECK_THAT(last_error(), Catch::Contains("none.jsonl"));
  CHECK(flashps_batch_validate(dir.path().c_str(), &items) == FLASHPS_IO_ERROR);  // a folder
  CHECK(flashps_batch_validate(nullptr, &items) == FLASHPS_INVALID_ARGUMENT);

  const flashps_batch_params defaults = flashps_batch_default_params();
  CHECK(defaults.struct_size == sizeof(defaults));
  CHECK(defaults.resume == 1);
  CHECK(defaults.max_in_flight == 0);
  CHECK(defaults.json_report_path == nullptr);
}

TEST_CASE("batch API: runs, reports failures and JSON, resumes, and cancels", "[api][batch_api]") {
  TempDir dir;
  const std::string manifest = write_manifest(dir);
  flashps_engine* engine = nullptr;
  const flashps_engine_params engine_params = flashps_engine_default_params();
  REQUIRE(flashps_engine_open(tiny_model(dir).c_str(), &engine_params, &engine) == FLASHPS_OK);

  Observed observed;
  flashps_batch_params params = flashps_batch_default_params();
  const std::string report_path = dir.file("report.json");
  params.json_report_path = report_path.c_str();
  params.on_failure = on_failure;
  params.progress = on_progress;
  params.user_data = &observed;
  flashps_batch_summary summary = summary_struct();

  SECTION("refusals") {
    CHECK(flashps_engine_run_batch(nullptr, manifest.c_str(), &params, &summary) == FLASHPS_INVALID_ARGUMENT);
    CHECK(flashps_engine_run_batch(engine, nullptr, &params, &summary) == FLASHPS_INVALID_ARGUMENT);
    flashps_batch_params bad = params;
    bad.struct_size = 0;
    CHECK(flashps_engine_run_batch(engine, manifest.c_str(), &bad, &summary) == FLASHPS_INVALID_ARGUMENT);
    CHECK_THAT(last_error(), Catch::Contains("flashps_batch_params"));
    flashps_batch_summary small = summary_struct();
    small.struct_size = 8;
    CHECK(flashps_engine_run_batch(engine, manifest.c_str(), &params, &small) == FLASHPS_INVALID_ARGUMENT);
    CHECK_THAT(last_error(), Catch::Contains("flashps_batch_summary"));
    CHECK(flashps_engine_run_batch(engine, dir.file("none.jsonl").c_str(), &params, &summary) == FLASHPS_NOT_FOUND);
    CHECK_FALSE(std::filesystem::exists(dir.file("out/a.png")));  // nothing ran
  }

  SECTION("run, then resume") {
    REQUIRE(flashps_engine_run_batch(engine, manifest.c_str(), &params, &summary) == FLASHPS_OK);
    CHECK(summary.total == 3);
    CHECK(summary.done == 2);
    CHECK(summary.failed == 1);
    CHECK(summary.skipped == 0);
    CHECK(summary.cancelled == 0);
    CHECK(summary.seconds > 0);
    CHECK(summary.throughput > 0);
    REQUIRE(summary.notes != nullptr);
    CHECK_THAT(std::string(summary.notes), Catch::Contains("prompt"));  // the tiny model takes no text
    CHECK(std::filesystem::exists(dir.file("out/a.png")));
    CHECK(flashps::read_image(dir.file("out/b.png")).width == 32);
    REQUIRE(observed.failures.size() == 1);
    CHECK(observed.failures[0].line == 4);
    CHECK(observed.failures[0].output == dir.file("out/c.png"));
    CHECK_THAT(observed.failures[0].error, Catch::Contains("missing-mask.png"));
    CHECK(observed.progress.back() == "batch 3/3");

    std::ifstream report_file(report_path);
    const nlohmann::json report = nlohmann::json::parse(report_file);
    CHECK(report["done"] == 2);
    CHECK(report["failed"] == 1);
    CHECK(report["skipped"] == 0);
    CHECK(report["cancelled"] == 0);
    CHECK(report["cache_hits"] == 0);
    CHECK(report["seconds"].get<double>() > 0);
    CHECK(report["throughput"].get<double>() > 0);
    REQUIRE(report["items"].size() == 3);
    CHECK(report["items"][0]["line"] == 2);
    CHECK(report["items"][0]["status"] == "done");
    CHECK(report["items"][0]["output"] == dir.file("out/a.png"));
    CHECK(report["items"][0]["error"] == "");
    CHECK(report["items"][0]["cache_hit"] == false);
    CHECK(report["items"][0]["seconds"].get<double>() > 0);
    CHECK(report["items"][2]["status"] == "failed");
    CHECK_THAT(report["items"][2]["error"].get<std::string>(), Catch::Contains("missing-mask.png"));

    // A second run skips what is written and retries the failure.
    observed = {};
    summary = summary_struct();
    REQUIRE(flashps_engine_run_batch(engine, manifest.c_str(), &params, &summary) == FLASHPS_OK);
    CHECK(summary.skipped == 2);
    CHECK(summary.done == 0);
    CHECK(summary.failed == 1);
    CHECK(observed.failures.size() == 1);
    // Without resume everything runs again.
    params.resume = 0;
    summary = summary_struct();
    REQUIRE(flashps_engine_run_batch(engine, manifest.c_str(), &params, &summary) == FLASHPS_OK);
    CHECK(summary.done == 2);
    CHECK(summary.skipped == 0);
  }

  SECTION("cancelled through progress") {
    observed.cancel_when_resolved = 1;
    params.max_in_flight = 1;  // so the rest is still to submit when the answer comes
    CHECK(flashps_engine_run_batch(engine, manifest.c_str(), &params, &summary) == FLASHPS_CANCELLED);
    CHECK_THAT(last_error(), Catch::Contains("cancelled"));
    CHECK(summary.done == 1);  // the item whose resolution was answered with 0
    CHECK(summary.cancelled == 2);  // nothing more was submitted
    CHECK_FALSE(std::filesystem::exists(dir.file("out/b.png")));
    CHECK(summary.total == 3);
    std::ifstream report_file(report_path);
    const nlohmann::json report = nlohmann::json::parse(report_file);
    CHECK(report["cancelled"] == summary.cancelled);
    REQUIRE(report["items"].size() == 3);
    CHECK(report["items"][0]["status"] == "done");
    CHECK(report["items"][1]["status"] == "cancelled");
    CHECK(report["items"][2]["status"] == "cancelled");
  }
  flashps_engine_close(engine);
}

TEST_CASE("batch API (C++): a cancel throws BatchCancelled with the summary, no temporaries", "[api][batch_api]") {
  TempDir dir;
  const std::string manifest = write_manifest(dir);
  const flashps::sdk::Engine engine = flashps::sdk::Engine::open(tiny_model(dir));
  flashps::sdk::BatchOptions options;
  options.json_report_path = dir.file("report.json");
  options.progress = [](const std::string&, int, int, double) { return false; };  // as a Ctrl+C handler's flag
  try {
    engine.run_batch(manifest, options);
    FAIL("run_batch returned although its progress callback cancelled it");
  } catch (const flashps::sdk::BatchCancelled& cancelled) {
    CHECK(cancelled.status() == FLASHPS_CANCELLED);
    const flashps::sdk::BatchSummary& summary = cancelled.summary();
    CHECK(summary.total == 3);
    CHECK(summary.cancelled >= 1);  // the first answer comes once an item resolves or while it runs
    CHECK(summary.done + summary.failed + summary.cancelled == 3);
  }
  std::ifstream report_file(dir.file("report.json"));
  const nlohmann::json report = nlohmann::json::parse(report_file);
  REQUIRE(report["items"].size() == 3);
  for (const nlohmann::json& item : report["items"])
    CHECK(std::filesystem::exists(item["output"].get<std::string>()) == (item["status"] == "done"));
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    CHECK(entry.path().filename().string().rfind(".partial-", 0) != 0);
  if (std::filesystem::exists(dir.file("out")))
    for (const auto& entry : std::filesystem::directory_iterator(dir.file("out")))
      CHECK(entry.path().filename().string().rfind(".partial-", 0) != 0);
}
