#include "serve_tools/batch_runner.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/image/image.h"
#include "core/files/json_file.h"
#include "serve_tools/batch_outputs.h"

namespace flashps::serve {
namespace {

EditRequest request_of(const BatchItem& item) {
  EditRequest request;
  request.image = read_image(item.image);
  request.mask = read_image(item.mask);
  request.prompt = item.prompt;
  if (!item.prompt_embeds.empty()) request.conditioning = load_conditioning(item.prompt_embeds);
  request.seed = item.seed;
  request.steps = item.steps;
  request.strength = item.strength;
  request.guidance_scale = item.guidance;
  request.mode = cache_mode_from_name(item.cache);
  return request;
}

// A slow edit keeps the host's progress callback polled this often, so it can cancel promptly.
constexpr double kProgressPollSeconds = 0.1;

std::vector<std::string> output_folders(const BatchManifest& manifest) {
  std::vector<std::string> folders;
  for (const BatchItem& item : manifest.items) folders.push_back(std::filesystem::path(item.output).parent_path());
  return folders;
}

}  // namespace

BatchSummary run_batch(Engine& engine, const BatchManifest& manifest, const BatchRunOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  BatchSummary summary;
  summary.total = static_cast<int>(manifest.items.size());
  summary.items.resize(manifest.items.size());
  struct InFlight {
    size_t index;
    EditHandle handle;
  };
  std::deque<InFlight> in_flight;
  bool cancelled = false;
  int prompts = 0;
  if (const int removed = remove_stale_partials(output_folders(manifest)))
    summary.notes.push_back("removed " + std::to_string(removed) +
                            " unfinished output file(s) (.partial-*) left by an interrupted run");

  auto report = [&] {
    if (!options.progress) return;
    BatchProgress progress{summary.total, summary.done, summary.failed, summary.skipped,
                           static_cast<int>(in_flight.size()), elapsed()};
    if (!options.progress(progress) && !cancelled) {
      cancelled = true;
      for (InFlight& item : in_flight) item.handle.cancel();
    }
  };
  auto fail = [&](size_t index, const std::string& status, const std::string& error) {
    summary.items[index].status = status;
    summary.items[index].error = error;
    if (status == "cancelled") ++summary.cancelled;
    else ++summary.failed;
  };
  auto collect_oldest = [&] {
    while (!in_flight.front().handle.wait_for(kProgressPollSeconds)) report();  // a cancel stops it at a step boundary
    InFlight item = std::move(in_flight.front());
    in_flight.pop_front();
    BatchItemOutcome& outcome = summary.items[item.index];
    try {
      EditResult result = item.handle.wait();
      write_output_atomically(outcome.output, result.image);
      outcome.note = image_write_loss(outcome.output, result.image);
      outcome.status = "done";
      outcome.cache_hit = result.stats.cache_hit;
      outcome.seconds = item.handle.latency_seconds();
      summary.cache_hits += outcome.cache_hit;
      ++summary.done;
    } catch (const Cancelled&) {
      fail(item.index, "cancelled", "cancelled");
    } catch (const std::exception& error) {
      fail(item.index, "failed", error.what());
    }
    report();
  };

  for (size_t i = 0; i < manifest.items.size(); ++i) {
    const BatchItem& item = manifest.items[i];
    BatchItemOutcome& outcome = summary.items[i];
    outcome.line = item.line;
    outcome.output = item.output;
    if (cancelled) {
      fail(i, "cancelled", "cancelled");
      continue;
    }
    std::error_code ignored;  // unreadable: the write reports it
    if (std::filesystem::is_directory(item.output, ignored)) {
      fail(i, "failed", manifest.source + ":" + std::to_string(item.line) + ": output " + item.output +
                            " is a folder, not an image file");
      report();
      continue;
    }
    if (options.resume && output_is_complete(item.output)) {
      outcome.status = "skipped";
      ++summary.skipped;
      report();
      continue;
    }
    prompts += !item.prompt.empty();
    EditRequest request;
    try {
      request = request_of(item);
    } catch (const std::exception& error) {
      fail(i, "failed", manifest.source + ":" + std::to_string(item.line) + ": " + error.what());
      report();
      continue;
    }
    while (in_flight.size() >= std::max<size_t>(1, options.max_in_flight)) collect_oldest();
    if (cancelled) {  // the progress callback answered while a slot was awaited
      fail(i, "cancelled", "cancelled");
      continue;
    }
    while (true) {
      EditHandle handle = engine.submit(request);
      if (handle.status() != RequestStatus::rejected || in_flight.empty()) {
        in_flight.push_back({i, std::move(handle)});
        break;
      }
      collect_oldest();  // queue full: wait for a slot, then resubmit
    }
  }
  while (!in_flight.empty()) collect_oldest();
  if (prompts && !options.model_takes_text)
    summary.notes.push_back(std::to_string(prompts) +
                            " items give a prompt: this model has no text encoder, so prompts are not used "
                            "(give \"prompt_embeds\"; the bundled model is unconditional)");
  std::vector<std::string> lost_alpha;
  for (const BatchItemOutcome& item : summary.items)
    if (!item.note.empty()) lost_alpha.push_back("line " + std::to_string(item.line) + " " + item.output);
  if (!lost_alpha.empty()) {
    const size_t shown = std::min<size_t>(lost_alpha.size(), 5);
    std::string listed;
    for (size_t i = 0; i < shown; ++i) listed += (i ? ", " : "") + lost_alpha[i];
    if (shown < lost_alpha.size()) listed += ", ... (all in the JSON report)";
    summary.notes.push_back(std::to_string(lost_alpha.size()) +
                            " output(s) lost their input's transparency: JPEG has no alpha channel (" + listed +
                            "); name them .png to keep it");
  }
  summary.seconds = elapsed();
  summary.throughput = summary.seconds > 0 ? summary.done / summary.seconds : 0;
  return summary;
}

void write_batch_report(const BatchSummary& summary, const std::string& path) {
  nlohmann::json items = nlohmann::json::array();
  for (const BatchItemOutcome& item : summary.items)
    items.push_back({{"line", item.line}, {"output", item.output}, {"status", item.status},
                     {"error", item.error}, {"note", item.note}, {"cache_hit", item.cache_hit}, {"seconds", item.seconds}});
  write_json_file(path, {{"done", summary.done}, {"skipped", summary.skipped}, {"failed", summary.failed},
                         {"cancelled", summary.cancelled}, {"cache_hits", summary.cache_hits},
                         {"seconds", summary.seconds}, {"throughput", summary.throughput}, {"items", items}});
}

}  // namespace flashps::serve
