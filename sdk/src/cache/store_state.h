// Internals shared by the activation store, its captures and its writers.
#pragma once
#include <ATen/Tensor.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cache/activation_store.h"
#include "cache/host_tier.h"
#include "cache/segment_file.h"
#include "cache/sqlite_db.h"
#include "cache/store_index.h"

namespace flashps::cache {

struct EntryRecord {
  engine::EntryKey key;
  int64_t offset = 0, length = 0, rows = 0, width = 0;
  at::ScalarType dtype = at::kFloat;
  std::vector<uint64_t> row_checksums;
  bool quarantined = false;
};

struct ActivationStore::State {
  ActivationStoreOptions options;
  std::string segments_dir;
  std::unique_ptr<SqliteDb> db;
  bool read_only = false;
  std::string read_only_reason;     // why, and how to make the folder writable
  std::vector<std::string> notes;   // how the index was opened (store_index.h)
  HostTier host;
  std::atomic<int64_t> bytes_read{0};
  std::atomic<int64_t> reads{0};
  std::atomic<int64_t> disk_read_nanoseconds{0};  // with bytes_read: observed disk bandwidth
  double disk_bytes_per_second() const;

  explicit State(ActivationStoreOptions opts);
  std::string segment_path(const std::string& segment) const { return segments_dir + "/" + segment; }
  std::vector<EntryRecord> load_entries(int64_t capture_id);
  void quarantine(int64_t capture_id, const engine::EntryKey& key);
  void remove_capture(int64_t capture_id, const std::string& segment);
  void require_writable(const std::string& what) const;  // IoError naming the fix on a read-only store
  std::string read_only_message(const std::string& what) const;
  bool should_verify() { return options.verify == VerifyPolicy::always ||
                                (options.verify == VerifyPolicy::sampled && reads++ % options.sample_every == 0); }
};

uint64_t row_checksum(const void* data, size_t size);
double now_seconds();

// A committed capture opened for reading (defined in store_capture.cpp).
std::shared_ptr<const engine::Capture> open_store_capture(std::shared_ptr<ActivationStore::State> state,
                                                          int64_t capture_id, const std::string& segment);
// Reads a whole entry from disk, verifying every row; Error (and quarantine) on damage.
at::Tensor read_whole_entry(ActivationStore::State& state, int64_t capture_id, const SegmentReader& segment,
                            const EntryRecord& record);

}  // namespace flashps::cache
