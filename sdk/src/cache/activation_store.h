// The persistent activation store: captures of template runs on disk, indexed in SQLite, with a
// host-memory tier in front. Implements engine::CaptureStore, so pipelines use it unchanged.
//
//   <directory>/index.sqlite     the index (WAL), see store_schema.h
//   <directory>/segments/*.seg   one append-only file of tensor bytes per capture
//
// Durability: a capture's bytes are written and flushed before its index rows are committed in
// one transaction, so a crash leaves either a complete capture or an orphan segment, which
// opening the store (or gc()) removes. Readers verify per-row checksums (policy below); a
// damaged entry is quarantined and reported as missing, and the edit computes that block.
// Several threads and several processes may use one store at once.
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/diagnostics/progress.h"
#include "engine/capture.h"

namespace flashps::cache {

enum class VerifyPolicy { always, sampled, never };
VerifyPolicy verify_policy_from_name(const std::string& name);  // Error for unknown names

struct ActivationStoreOptions {
  std::string directory;
  int64_t host_capacity_bytes = int64_t{1} << 30;  // host-memory tier
  int64_t disk_quota_bytes = 0;                     // 0 = unlimited; else LRU eviction on commit
  VerifyPolicy verify = VerifyPolicy::always;
  int sample_every = 16;  // with VerifyPolicy::sampled: one read in this many is verified
  bool read_only = false;  // also chosen by itself for a folder this process cannot write
};

struct StoredCapture {
  int64_t id = 0;
  engine::CaptureId capture_id;
  std::string segment;
  int64_t bytes = 0, entries = 0, quarantined = 0;
  double created = 0, last_access = 0;  // seconds since the epoch
};

struct StoreStats {
  int64_t captures = 0, entries = 0, bytes = 0, quarantined = 0;
  int64_t segment_files = 0, segment_bytes = 0;
  int64_t host_bytes = 0, host_capacity = 0, host_hits = 0, host_misses = 0;
  int64_t disk_quota = 0;
  int64_t bytes_read_from_disk = 0;  // by this process, since the store was opened
};

struct RecoveryReport {
  int removed_captures = 0;  // index rows whose bytes were missing or short
  int removed_segments = 0;  // orphan segments of writers that never committed
  int64_t reclaimed_bytes = 0;
  std::vector<std::string> notes;  // on open, first how the store degraded (store_index.h), if it did
};

struct VerifyReport {
  int64_t entries_checked = 0, damaged = 0;
  std::vector<std::string> problems;
};

class ActivationStore : public engine::CaptureStore, public std::enable_shared_from_this<ActivationStore> {
 public:
  // Opens (creating if needed) and recovers the store. A damaged, read-only or full store
  // degrades (store_index.h) and open_report().notes say how. Use ActivationStore::open.
  static std::shared_ptr<ActivationStore> open(ActivationStoreOptions options);
  ~ActivationStore() override;

  std::shared_ptr<const engine::Capture> find(const engine::CaptureId& id) override;
  std::unique_ptr<engine::CaptureWriter> begin(const engine::CaptureId& id) override;

  // Starts loading a capture's entries from disk into the host tier on a background thread
  // and returns at once (no-op if the capture is unknown). wait_for_prefetches() joins them.
  void prefetch(const engine::CaptureId& id);
  void wait_for_prefetches();

  std::vector<StoredCapture> list();
  StoreStats stats();
  VerifyReport verify(const ProgressCallback& progress = {});  // reads every entry
  // These three free a capture's bytes before they write to the index, so they work on a full disk.
  int64_t evict_to(int64_t max_bytes);                         // disk LRU; returns bytes freed
  int remove(const std::string& template_hash_prefix);         // returns captures removed
  RecoveryReport gc();                                         // orphans and rows whose bytes are gone
  const RecoveryReport& open_report() const { return open_report_; }
  bool read_only() const;
  std::string why_unwritable() const override;
  const ActivationStoreOptions& options() const;

  struct State;  // shared with captures and writers (activation_store.cpp)

 private:
  explicit ActivationStore(ActivationStoreOptions options);
  std::shared_ptr<State> state_;
  RecoveryReport open_report_;
  std::mutex prefetch_mutex_;
  std::vector<std::thread> prefetches_;
};

// ~/.cache/flashps/store (XDG_CACHE_HOME respected), or FLASHPS_CACHE_DIR.
std::string default_store_directory();

}  // namespace flashps::cache
