// flashps/engine.h's batch functions over serve::run_batch (serve_tools/batch_runner.h): manifests are
// read here so a missing file, an unreadable one and a malformed one get distinct statuses.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "api/abi_layout.h"
#include "api/api_support.h"
#include "api/engine_handle.h"
#include "core/diagnostics/error.h"
#include "flashps/engine.h"
#include "serve_tools/batch_manifest.h"
#include "serve_tools/batch_runner.h"

namespace {

using flashps::api::guarded;
using flashps::api::invalid;

// NotFoundError (no such file), IoError (unreadable), CorruptDataError "<path>:<line>: <problem>".
flashps::serve::BatchManifest load_manifest(const std::string& path) {
  if (!std::filesystem::exists(path)) throw flashps::NotFoundError(path + ": batch manifest does not exist");
  if (std::filesystem::is_directory(path)) throw flashps::IoError(path + ": batch manifest is a folder, not a file");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw flashps::IoError(path + ": cannot open batch manifest");
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) throw flashps::IoError(path + ": cannot read batch manifest");
  try {
    return flashps::serve::parse_batch_manifest(text.str(), path);
  } catch (const flashps::Error& error) {
    throw flashps::CorruptDataError(error.what());  // already "<path>:<line>: <problem>"
  }
}

}  // namespace

extern "C" {

flashps_batch_params flashps_batch_default_params(void) {
  flashps_batch_params params{};
  params.struct_size = sizeof(params);
  params.resume = 1;
  return params;
}

flashps_status flashps_batch_validate(const char* manifest_path, int* items) {
  if (!manifest_path) return invalid("flashps_batch_validate", "manifest_path must not be NULL");
  return guarded([&] {
    const flashps::serve::BatchManifest manifest = load_manifest(manifest_path);
    if (items) *items = static_cast<int>(manifest.items.size());
  });
}

flashps_status flashps_engine_run_batch(flashps_engine* engine, const char* manifest_path,
                                        const flashps_batch_params* given, flashps_batch_summary* summary) {
  static constexpr const char* kFunction = "flashps_engine_run_batch";
  if (!engine || !manifest_path) return invalid(kFunction, "engine and manifest_path must not be NULL");
  flashps_batch_params params = flashps_batch_default_params();
  if (!flashps::api::read_params(given, flashps::api::kBatchParamsV2Size, params, kFunction,
                                 "flashps_batch_params"))
    return FLASHPS_INVALID_ARGUMENT;
  if (summary && !flashps::api::check_output_size(summary->struct_size,
                                                  flashps::api::kBatchSummaryV2Size, kFunction,
                                                  "flashps_batch_summary"))
    return FLASHPS_INVALID_ARGUMENT;
  bool cancelled_by_caller = false;
  const flashps_status status = guarded([&] {
    const flashps::serve::BatchManifest manifest = load_manifest(manifest_path);
    flashps::serve::BatchRunOptions run;
    run.resume = params.resume != 0;
    run.max_in_flight = params.max_in_flight > 0 ? params.max_in_flight : engine->engine->options().max_queued;
    run.model_takes_text = engine->info.takes_text != 0;
    if (params.progress)
      run.progress = [&](const flashps::serve::BatchProgress& progress) {
        const int resolved = progress.done + progress.failed + progress.skipped;
        const bool go_on = params.progress("batch", resolved, progress.total, progress.seconds, params.user_data) != 0;
        cancelled_by_caller = cancelled_by_caller || !go_on;
        return go_on;
      };
    const flashps::serve::BatchSummary result = flashps::serve::run_batch(*engine->engine, manifest, run);
    if (params.on_failure)
      for (const flashps::serve::BatchItemOutcome& item : result.items)
        if (item.status == "failed") params.on_failure(item.line, item.output.c_str(), item.error.c_str(), params.user_data);
    if (params.json_report_path) flashps::serve::write_batch_report(result, params.json_report_path);
    if (summary) {
      flashps_batch_summary out{};
      out.total = result.total;
      out.done = result.done;
      out.skipped = result.skipped;
      out.failed = result.failed;
      out.cancelled = result.cancelled;
      out.cache_hits = result.cache_hits;
      out.seconds = result.seconds;
      out.throughput = result.throughput;
      out.notes = flashps::api::thread_string(flashps::api::kBatchSlot, flashps::api::join_lines(result.notes));
      flashps::api::write_output(summary, out);
    }
  });
  if (status == FLASHPS_OK && cancelled_by_caller)
    return flashps::api::fail(FLASHPS_CANCELLED, kFunction,
                              std::string(manifest_path) + ": cancelled by the progress callback (see the summary)");
  return status;
}

}  // extern "C"
