// flashps/store.h over cache::ActivationStore: open, list, stats, verify, evict, remove, gc.
#include <algorithm>
#include <set>
#include <string>

#include "api/abi_layout.h"
#include "api/api_support.h"
#include "api/handles.h"
#include "cache/activation_store.h"
#include "core/diagnostics/error.h"
#include "flashps/flashps.h"

namespace flashps::api {

std::shared_ptr<engine::CaptureStore> capture_store_for(flashps_store* store, const char* capture_dir) {
  if (store) return store->store;
  if (!capture_dir) return nullptr;
  if (!*capture_dir) throw InvalidArgumentError("capture_dir is \"\": give a folder, or NULL for captures in memory");
  cache::ActivationStoreOptions options;
  options.directory = capture_dir;
  return cache::ActivationStore::open(options);
}

}  // namespace flashps::api

namespace {

using flashps::api::guarded;
using flashps::api::invalid;

// Template hashes are hex digests; a shorter prefix would too easily match several templates.
constexpr size_t kMinRemovePrefix = 4;

flashps_status null_store(const char* function) { return invalid(function, "store is NULL"); }

}  // namespace

extern "C" {

flashps_store_params flashps_store_default_params(void) {
  flashps_store_params params{};
  params.struct_size = sizeof(params);
  params.directory = nullptr;
  params.host_capacity_bytes = 0;
  params.disk_quota_bytes = 0;
  return params;
}

const char* flashps_store_default_directory(void) {
  return flashps::api::thread_string(flashps::api::kDirectorySlot, flashps::cache::default_store_directory());
}

flashps_status flashps_store_open(const flashps_store_params* given, flashps_store** store) {
  const char* const function = "flashps_store_open";
  if (!store) return invalid(function, "store (the output) is NULL");
  *store = nullptr;
  flashps_store_params params = flashps_store_default_params();
  if (!flashps::api::read_params(given, flashps::api::kStoreParamsV2Size, params, function, "flashps_store_params"))
    return FLASHPS_INVALID_ARGUMENT;
  if (params.host_capacity_bytes < 0)
    return invalid(function, "flashps_store_params.host_capacity_bytes is " +
                                 std::to_string(params.host_capacity_bytes) + "; it must be >= 0 (0: 1 GiB)");
  if (params.disk_quota_bytes < 0)
    return invalid(function, "flashps_store_params.disk_quota_bytes is " + std::to_string(params.disk_quota_bytes) +
                                 "; it must be >= 0 (0: unlimited)");
  if (params.directory && !*params.directory)
    return invalid(function, "flashps_store_params.directory is \"\": give a folder, or NULL for the default");
  return guarded([&] {
    flashps::cache::ActivationStoreOptions options;
    options.directory = params.directory ? params.directory : flashps::cache::default_store_directory();
    if (params.host_capacity_bytes > 0) options.host_capacity_bytes = params.host_capacity_bytes;
    options.disk_quota_bytes = params.disk_quota_bytes;
    auto handle = std::make_unique<flashps_store>();
    handle->store = flashps::cache::ActivationStore::open(options);
    handle->directory = options.directory;
    handle->notes = flashps::api::join_lines(handle->store->open_report().notes);
    *store = handle.release();
  });
}

void flashps_store_close(flashps_store* store) { delete store; }

const char* flashps_store_directory(const flashps_store* store) { return store ? store->directory.c_str() : nullptr; }
const char* flashps_store_notes(const flashps_store* store) { return store ? store->notes.c_str() : nullptr; }
int flashps_store_is_read_only(const flashps_store* store) { return store && store->store->read_only() ? 1 : 0; }

flashps_status flashps_store_list(flashps_store* store, flashps_capture_callback callback, void* user_data) {
  const char* const function = "flashps_store_list";
  if (!store) return null_store(function);
  if (!callback) return invalid(function, "callback is NULL");
  return guarded([&] {
    for (const flashps::cache::StoredCapture& capture : store->store->list()) {
      flashps_capture_info info{};
      info.struct_size = sizeof(info);
      info.template_hash = capture.capture_id.template_hash.c_str();
      info.model_fingerprint = capture.capture_id.model_fingerprint.c_str();
      info.config = capture.capture_id.config.c_str();
      info.bytes = capture.bytes;
      info.entries = capture.entries;
      info.quarantined = capture.quarantined;
      info.created = capture.created;
      info.last_access = capture.last_access;
      if (callback(&info, user_data) == 0) break;
    }
  });
}

flashps_status flashps_store_get_stats(flashps_store* store, flashps_store_stats* stats) {
  const char* const function = "flashps_store_get_stats";
  if (!store) return null_store(function);
  if (!stats) return invalid(function, "stats (the output) is NULL");
  if (!flashps::api::check_output_size(stats->struct_size, flashps::api::kStoreStatsV2Size, function,
                                       "flashps_store_stats"))
    return FLASHPS_INVALID_ARGUMENT;
  return guarded([&] {
    const flashps::cache::StoreStats measured = store->store->stats();
    const flashps::cache::RecoveryReport& opened = store->store->open_report();
    flashps_store_stats result{};
    result.captures = measured.captures;
    result.entries = measured.entries;
    result.bytes = measured.bytes;
    result.quarantined = measured.quarantined;
    result.segment_files = measured.segment_files;
    result.segment_bytes = measured.segment_bytes;
    result.host_bytes = measured.host_bytes;
    result.host_capacity = measured.host_capacity;
    result.disk_quota = measured.disk_quota;
    result.recovered_captures = opened.removed_captures;
    result.recovered_segments = opened.removed_segments;
    flashps::api::write_output(stats, result);
  });
}

flashps_status flashps_store_verify(flashps_store* store, flashps_progress_callback progress, void* user_data,
                                    flashps_verify_report* report) {
  const char* const function = "flashps_store_verify";
  if (!store) return null_store(function);
  if (report && !flashps::api::check_output_size(report->struct_size, flashps::api::kVerifyReportV2Size, function,
                                                 "flashps_verify_report"))
    return FLASHPS_INVALID_ARGUMENT;
  return guarded([&] {
    flashps::ProgressCallback on_progress;
    if (progress)
      on_progress = [progress, user_data](const flashps::ProgressEvent& event) {
        return progress(event.stage.c_str(), event.step, event.total_steps, event.stage_seconds, user_data) != 0;
      };
    const flashps::cache::VerifyReport checked = store->store->verify(on_progress);
    if (!report) return;
    flashps_verify_report result{};
    result.entries_checked = checked.entries_checked;
    result.damaged = checked.damaged;
    result.problems = flashps::api::thread_string(flashps::api::kStoreSlot, flashps::api::join_lines(checked.problems));
    flashps::api::write_output(report, result);
  });
}

flashps_status flashps_store_evict(flashps_store* store, int64_t max_bytes, int64_t* bytes_freed) {
  const char* const function = "flashps_store_evict";
  if (!store) return null_store(function);
  if (max_bytes < 0)
    return invalid(function, "max_bytes is " + std::to_string(max_bytes) + "; it must be >= 0 (0 empties the store)");
  return guarded([&] {
    const int64_t freed = store->store->evict_to(max_bytes);
    if (bytes_freed) *bytes_freed = freed;
  });
}

flashps_status flashps_store_remove(flashps_store* store, const char* prefix, int all_matching, int* removed) {
  const char* const function = "flashps_store_remove";
  if (!store) return null_store(function);
  if (!prefix) return invalid(function, "prefix is NULL");
  const std::string wanted = prefix;
  if (wanted.size() < kMinRemovePrefix)
    return invalid(function, "prefix \"" + wanted + "\" is shorter than " + std::to_string(kMinRemovePrefix) +
                                 " characters: give more of the template hash (flashps_store_list shows them)");
  if (removed) *removed = 0;
  return guarded([&] {
    std::set<std::string> templates;
    for (const flashps::cache::StoredCapture& capture : store->store->list())
      if (capture.capture_id.template_hash.rfind(wanted, 0) == 0) templates.insert(capture.capture_id.template_hash);
    if (templates.empty())
      throw flashps::NotFoundError(store->directory + ": no capture's template hash starts with \"" + wanted + "\"");
    if (templates.size() > 1 && !all_matching) {
      std::string listed;
      for (const std::string& hash : templates) listed += (listed.empty() ? "" : ", ") + hash.substr(0, 16);
      throw flashps::InvalidArgumentError(store->directory + ": prefix \"" + wanted + "\" matches " +
                                          std::to_string(templates.size()) + " templates (" + listed +
                                          "): give a longer prefix, or set all_matching to remove them all");
    }
    // One template: remove by its whole hash, so a template stored meanwhile under the same
    // prefix is not taken with it.
    const int count = store->store->remove(templates.size() == 1 ? *templates.begin() : wanted);
    if (removed) *removed = count;
  });
}

flashps_status flashps_store_gc(flashps_store* store, flashps_gc_report* report) {
  const char* const function = "flashps_store_gc";
  if (!store) return null_store(function);
  if (report && !flashps::api::check_output_size(report->struct_size, flashps::api::kGcReportV2Size, function,
                                                 "flashps_gc_report"))
    return FLASHPS_INVALID_ARGUMENT;
  return guarded([&] {
    const flashps::cache::RecoveryReport collected = store->store->gc();
    if (!report) return;
    flashps_gc_report result{};
    result.removed_captures = collected.removed_captures;
    result.removed_segments = collected.removed_segments;
    result.reclaimed_bytes = collected.reclaimed_bytes;
    result.notes = flashps::api::thread_string(flashps::api::kStoreSlot, flashps::api::join_lines(collected.notes));
    flashps::api::write_output(report, result);
  });
}

}  // extern "C"
