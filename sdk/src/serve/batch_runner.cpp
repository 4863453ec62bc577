#include "serve/batch_runner.h"

#include <chrono>
#include <deque>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/image.h"
#include "core/json_file.h"

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
  request.mode = compute_mode_from_name(item.cache);
  return request;
}

void write_output(const std::string& path, const Image& image) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path());
  // Same extension, so the encoder picks the same format.
  const fs::path partial = target.parent_path() / (".partial-" + target.filename().string());
  write_image(partial.string(), image);
  fs::rename(partial, target);
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
    InFlight item = std::move(in_flight.front());
    in_flight.pop_front();
    BatchItemOutcome& outcome = summary.items[item.index];
    try {
      EditResult result = item.handle.wait();
      write_output(outcome.output, result.image);
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
    if (options.resume && std::filesystem::exists(item.output)) {
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
  summary.seconds = elapsed();
  summary.throughput = summary.seconds > 0 ? summary.done / summary.seconds : 0;
  return summary;
}

void write_batch_report(const BatchSummary& summary, const std::string& path) {
  nlohmann::json items = nlohmann::json::array();
  for (const BatchItemOutcome& item : summary.items)
    items.push_back({{"line", item.line}, {"output", item.output}, {"status", item.status},
                     {"error", item.error}, {"cache_hit", item.cache_hit}, {"seconds", item.seconds}});
  write_json_file(path, {{"done", summary.done}, {"skipped", summary.skipped}, {"failed", summary.failed},
                         {"cancelled", summary.cancelled}, {"cache_hits", summary.cache_hits},
                         {"seconds", summary.seconds}, {"throughput", summary.throughput}, {"items", items}});
}

}  // namespace flashps::serve
