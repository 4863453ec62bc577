// FlashPS C++ wrapper, part of <flashps/flashps.hpp> (include that).
// The activation store: captures on disk with a host-memory tier; list, verify, evict, remove, gc.
#ifndef FLASHPS_CPP_STORE_HPP
#define FLASHPS_CPP_STORE_HPP

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "flashps/cpp/common.hpp"

namespace flashps::sdk {

// ---- The activation store ----

struct StoreOptions {
  std::string directory;  // empty: Store::default_directory()
  int64_t host_capacity_bytes = 0;  // 0: 1 GiB
  int64_t disk_quota_bytes = 0;     // 0: unlimited
};

struct CaptureInfo {
  std::string template_hash, model_fingerprint, config;
  int64_t bytes = 0, entries = 0, quarantined = 0;
  double created = 0, last_access = 0;
};

struct StoreStats {
  int64_t captures = 0, entries = 0, bytes = 0, quarantined = 0;
  int64_t segment_files = 0, segment_bytes = 0, host_bytes = 0, host_capacity = 0, disk_quota = 0;
  int64_t recovered_captures = 0, recovered_segments = 0;
};

struct VerifyReport {
  int64_t entries_checked = 0, damaged = 0;
  std::vector<std::string> problems;
};

struct GcReport {
  int removed_captures = 0, removed_segments = 0;
  int64_t reclaimed_bytes = 0;
  std::vector<std::string> notes;
};

// A shared handle: copies refer to the same open store.
class Store {
 public:
  Store() = default;
  static std::string default_directory() { return flashps_store_default_directory(); }
  static Store open(const StoreOptions& options = {}) {
    flashps_store_params params = flashps_store_default_params();
    params.directory = detail::c_str_or_null(options.directory);
    params.host_capacity_bytes = options.host_capacity_bytes;
    params.disk_quota_bytes = options.disk_quota_bytes;
    flashps_store* store = nullptr;
    check(flashps_store_open(&params, &store));
    Store result;
    result.handle_.reset(store, flashps_store_close);
    return result;
  }
  // A view of a store someone else opened and closes (it must outlive this object).
  static Store borrow(flashps_store* store) {
    Store result;
    result.handle_.reset(store, [](flashps_store*) {});
    return result;
  }
  explicit operator bool() const { return static_cast<bool>(handle_); }
  flashps_store* get() const { return handle_.get(); }
  std::string directory() const { return flashps_store_directory(handle_.get()); }
  // What opening the store found and did (a damaged index set aside, a read-only folder, a full
  // disk, captures recovered), each naming the command that recovers; empty when nothing.
  std::vector<std::string> notes() const { return detail::split_lines(flashps_store_notes(handle_.get())); }
  bool read_only() const { return flashps_store_is_read_only(handle_.get()) != 0; }

  std::vector<CaptureInfo> list() const {
    std::vector<CaptureInfo> captures;
    check(flashps_store_list(
        handle_.get(),
        [](const flashps_capture_info* c, void* user_data) {
          auto& out = *static_cast<std::vector<CaptureInfo>*>(user_data);
          out.push_back({c->template_hash ? c->template_hash : "", c->model_fingerprint ? c->model_fingerprint : "",
                         c->config ? c->config : "", c->bytes, c->entries, c->quarantined, c->created,
                         c->last_access});
          return 1;
        },
        &captures));
    return captures;
  }
  StoreStats stats() const {
    flashps_store_stats c{};
    c.struct_size = sizeof(c);
    check(flashps_store_get_stats(handle_.get(), &c));
    return {c.captures,    c.entries,       c.bytes,         c.quarantined, c.segment_files, c.segment_bytes,
            c.host_bytes,  c.host_capacity, c.disk_quota,    c.recovered_captures, c.recovered_segments};
  }
  VerifyReport verify(const ProgressFunction& progress = {}) const {
    flashps_verify_report c{};
    c.struct_size = sizeof(c);
    check(flashps_store_verify(handle_.get(), progress ? detail::progress_trampoline : nullptr,
                               const_cast<ProgressFunction*>(&progress), &c));
    return {c.entries_checked, c.damaged, detail::split_lines(c.problems)};
  }
  int64_t evict(int64_t max_bytes) const {
    int64_t freed = 0;
    check(flashps_store_evict(handle_.get(), max_bytes, &freed));
    return freed;
  }
  // Captures removed; throws NOT_FOUND when nothing matches, INVALID_ARGUMENT when the prefix
  // names several templates and all_matching is false.
  int remove(const std::string& prefix, bool all_matching = false) const {
    int removed = 0;
    check(flashps_store_remove(handle_.get(), prefix.c_str(), all_matching ? 1 : 0, &removed));
    return removed;
  }
  GcReport gc() const {
    flashps_gc_report c{};
    c.struct_size = sizeof(c);
    check(flashps_store_gc(handle_.get(), &c));
    return {c.removed_captures, c.removed_segments, c.reclaimed_bytes, detail::split_lines(c.notes)};
  }

 private:
  std::shared_ptr<flashps_store> handle_;
};

}  // namespace flashps::sdk

#endif  // FLASHPS_CPP_STORE_HPP
