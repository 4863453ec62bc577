// run_batch (serve_tools/batch_runner.h) on the tiny pipeline: folder outputs fail alone, incomplete
// outputs are redone, a killed run's temporaries are removed, and a cancel from the progress
// callback reaches edits that are still waiting, and transparency a JPEG output drops is noted.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "pipeline/flux/flux_inpaint_pipeline.h"
#include "serve/engine_device.h"
#include "serve_tools/batch_runner.h"
#include "support/tiny_pipeline.h"

using namespace flashps;
using namespace flashps::serve;
using namespace flashps::test;
namespace fs = std::filesystem;

namespace {

std::unique_ptr<Engine> tiny_engine(const TempDir& dir) {
  auto pipeline = std::shared_ptr<FluxInpaintPipeline>(FluxInpaintPipeline::load(tiny_model(dir), at::kFloat));
  EngineOptions options;
  options.batching = batching_config("cb", 4);
  return std::make_unique<Engine>(std::vector<EngineDevice>{engine_device(pipeline)}, options);
}

BatchManifest manifest_of(const TempDir& dir, const std::vector<std::string>& outputs) {
  write_image(dir.file("in.png"), gradient_image(32, 32));
  write_image(dir.file("mask.png"), box_mask(32, 32, 4, 4, 12));
  BatchManifest manifest;
  manifest.source = dir.file("batch.jsonl");
  for (size_t i = 0; i < outputs.size(); ++i) {
    BatchItem item;
    item.line = static_cast<int>(i) + 1;
    item.image = dir.file("in.png");
    item.mask = dir.file("mask.png");
    item.output = dir.file(outputs[i]);
    item.seed = i;
    item.steps = 1;
    manifest.items.push_back(item);
  }
  return manifest;
}

bool has_partials(const fs::path& folder) {
  for (const auto& entry : fs::directory_iterator(folder))
    if (entry.path().filename().string().rfind(".partial-", 0) == 0) return true;
  return false;
}

}  // namespace

TEST_CASE("batch runner: a folder output fails alone; empty and truncated outputs are redone", "[serve][batch]") {
  TempDir dir;
  const auto engine = tiny_engine(dir);
  const BatchManifest manifest = manifest_of(dir, {"out/folder.png", "out/empty.png", "out/cut.png", "out/whole.png"});
  fs::create_directories(dir.file("out/folder.png"));
  std::ofstream(dir.file("out/empty.png")).flush();
  write_image(dir.file("out/cut.png"), gradient_image(32, 32));
  fs::resize_file(dir.file("out/cut.png"), fs::file_size(dir.file("out/cut.png")) / 2);
  write_image(dir.file("out/whole.png"), gradient_image(32, 32));
  std::ofstream(dir.file("out/.partial-cut.png.tmp-7-0")) << "left by a killed run";

  const BatchSummary summary = run_batch(*engine, manifest, {});
  CHECK(summary.failed == 1);
  CHECK(summary.done == 2);
  CHECK(summary.skipped == 1);
  CHECK(summary.items[0].status == "failed");
  CHECK(summary.items[0].error == manifest.source + ":1: output " + dir.file("out/folder.png") +
                                      " is a folder, not an image file");
  CHECK(fs::is_empty(dir.file("out/folder.png")));
  CHECK(summary.items[1].status == "done");
  CHECK(summary.items[2].status == "done");
  CHECK(read_image(dir.file("out/empty.png")).width == 32);
  CHECK(read_image(dir.file("out/cut.png")).width == 32);
  CHECK(summary.items[3].status == "skipped");
  CHECK_FALSE(has_partials(dir.file("out")));
  REQUIRE(summary.notes.size() == 1);
  CHECK_THAT(summary.notes[0], Catch::Contains("removed 1 unfinished output"));

  BatchRunOptions again;
  again.resume = false;  // the folder still fails without resume, and is not replaced
  const BatchSummary rerun = run_batch(*engine, manifest, again);
  CHECK(rerun.failed == 1);
  CHECK(rerun.done == 3);
  CHECK(fs::is_directory(dir.file("out/folder.png")));
}

TEST_CASE("batch runner: transparency lost to a JPEG output is noted per item and in the summary",
          "[serve][batch]") {
  TempDir dir;
  const auto engine = tiny_engine(dir);
  BatchManifest manifest = manifest_of(dir, {"out/a.jpg", "out/b.png"});
  const Image rgb = gradient_image(32, 32);
  Image rgba(32, 32, 4);
  for (size_t i = 0; i < rgb.pixel_count(); ++i) {
    for (int c = 0; c < 3; ++c) rgba.pixels[i * 4 + c] = rgb.pixels[i * 3 + c];
    rgba.pixels[i * 4 + 3] = static_cast<uint8_t>(i % 2 ? 255 : 96);
  }
  write_image(dir.file("in.png"), rgba);

  const BatchSummary summary = run_batch(*engine, manifest, {});
  REQUIRE(summary.done == 2);
  CHECK(summary.items[0].note == "the input's transparency is not in " + dir.file("out/a.jpg") +
                                     ": JPEG has no alpha channel (write a .png to keep it)");
  CHECK(summary.items[1].note.empty());
  CHECK(read_image(dir.file("out/b.png")).channels == 4);
  REQUIRE(summary.notes.size() == 1);
  CHECK(summary.notes[0] == "1 output(s) lost their input's transparency: JPEG has no alpha channel (line 1 " +
                                dir.file("out/a.jpg") + "); name them .png to keep it");

  write_batch_report(summary, dir.file("report.json"));
  std::ifstream report(dir.file("report.json"));
  const std::string text((std::istreambuf_iterator<char>(report)), std::istreambuf_iterator<char>());
  CHECK_THAT(text, Catch::Contains("JPEG has no alpha channel (write a .png to keep it)"));
}

TEST_CASE("batch runner: the progress callback is polled while edits wait; its cancel ends them", "[serve][batch]") {
  TempDir dir;
  const auto engine = tiny_engine(dir);
  const BatchManifest manifest = manifest_of(dir, {"out/a.png", "out/b.png", "out/c.png"});
  engine->pause();  // nothing resolves unless the runner cancels it
  // Should the runner never poll, let the edits finish after a while: the test then fails, not hangs.
  std::atomic<bool> finished{false};
  std::thread watchdog([&] {
    for (int i = 0; i < 600 && !finished; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    engine->resume();
  });
  std::vector<BatchProgress> calls;
  BatchRunOptions options;
  options.progress = [&](const BatchProgress& progress) {
    calls.push_back(progress);
    return false;
  };
  const BatchSummary summary = run_batch(*engine, manifest, options);
  finished = true;
  watchdog.join();

  REQUIRE_FALSE(calls.empty());
  CHECK(calls[0].in_flight == 3);  // asked while all three were waiting, before any resolved
  CHECK(calls[0].done + calls[0].failed + calls[0].skipped == 0);
  CHECK(summary.cancelled == 3);
  CHECK(summary.done == 0);
  for (const BatchItemOutcome& item : summary.items) CHECK(item.status == "cancelled");
  CHECK_FALSE(fs::exists(dir.file("out")));
}
