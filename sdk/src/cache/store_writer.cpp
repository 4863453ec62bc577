// Writing a capture: bytes appended to a new segment, flushed, then indexed in one transaction.
#include <ATen/ATen.h>
#include <unistd.h>

#include <random>

#include "cache/fault_points.h"
#include "cache/store_state.h"
#include "core/diagnostics/error.h"

namespace flashps::cache {
namespace {

std::string new_segment_name() {
  std::random_device device;
  std::mt19937_64 generator((uint64_t(device()) << 32) ^ device() ^ uint64_t(::getpid()));
  char name[32];
  std::snprintf(name, sizeof(name), "%016llx.seg", static_cast<unsigned long long>(generator()));
  return name;
}

class StoreWriter : public engine::CaptureWriter {
 public:
  StoreWriter(std::shared_ptr<ActivationStore> store, std::shared_ptr<ActivationStore::State> state,
              engine::CaptureId id)
      : store_(std::move(store)), state_(std::move(state)), id_(std::move(id)), segment_name_(new_segment_name()),
        segment_(state_->segment_path(segment_name_)) {}

  void put(const engine::EntryKey& key, const at::Tensor& rows) override {
    if (committed_) throw Error("capture writer: put after commit");
    if (rows.dim() != 2) throw Error("capture writer: entries must be [rows, width]");
    at::Tensor data = rows.detach().to(at::kCPU).contiguous();
    EntryRecord record;
    record.key = key;
    record.rows = data.size(0);
    record.width = data.size(1);
    record.dtype = data.scalar_type();
    const int64_t row_bytes = record.width * static_cast<int64_t>(data.element_size());
    record.length = record.rows * row_bytes;
    const auto* bytes = static_cast<const uint8_t*>(data.data_ptr());
    record.row_checksums.resize(record.rows);
    for (int64_t r = 0; r < record.rows; ++r) record.row_checksums[r] = row_checksum(bytes + r * row_bytes, row_bytes);
    record.offset = segment_.append(bytes, record.length);
    records_.push_back(std::move(record));
  }

  std::shared_ptr<const engine::Capture> commit() override {
    if (committed_) throw Error("capture writer: committed twice");
    committed_ = true;
    const int64_t bytes = segment_.size();
    const int64_t quota = state_->options.disk_quota_bytes;
    if (quota > 0 && bytes > quota)
      throw Error(state_->options.directory + ": capture of " + std::to_string(bytes) +
                  " bytes exceeds the store quota of " + std::to_string(quota) + " bytes; nothing stored");
    reach_fault_point(FaultPoint::segment_written);
#ifndef FLASHPS_TEST_BREAK_REORDER_COMMIT  // scripts/check-crash-test-catches.sh (segment_file.cpp)
    segment_.flush();  // bytes durable before any index row points at them
#endif
    reach_fault_point(FaultPoint::segment_flushed);
    SqliteDb& db = *state_->db;
    int64_t capture_id = 0;
    {
      Transaction transaction(db);
      reach_fault_point(FaultPoint::index_transaction_begun);
      Statement existing(db, "SELECT id FROM captures WHERE template_hash=? AND model_fingerprint=? AND config=?");
      existing.bind(1, id_.template_hash).bind(2, id_.model_fingerprint).bind(3, id_.config);
      const bool already_stored = existing.step();
      existing.reset();  // no statement may stay open across the next transaction
      if (already_stored) {
        // Another thread or process committed the same capture first: keep theirs, drop ours.
        transaction.commit();
        return store_->find(id_);
      }
      const double now = now_seconds();
      Statement insert(db,
                       "INSERT INTO captures (template_hash, model_fingerprint, config, segment, bytes, entries, "
                       "created, last_access) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
      insert.bind(1, id_.template_hash).bind(2, id_.model_fingerprint).bind(3, id_.config).bind(4, segment_name_);
      insert.bind(5, bytes).bind(6, static_cast<int64_t>(records_.size())).bind(7, now).bind(8, now);
      insert.run();
      capture_id = db.last_insert_id();
      Statement entry(db,
                      "INSERT INTO entries (capture_id, step, block, slot, offset, length, dtype, rows, width, "
                      "row_checksums) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
      for (const EntryRecord& record : records_) {
        entry.reset();
        entry.bind(1, capture_id).bind(2, int64_t{record.key.step}).bind(3, int64_t{record.key.block});
        entry.bind(4, static_cast<int64_t>(record.key.slot)).bind(5, record.offset).bind(6, record.length);
        entry.bind(7, static_cast<int64_t>(record.dtype)).bind(8, record.rows).bind(9, record.width);
        entry.bind_blob(10, record.row_checksums.data(), record.row_checksums.size() * sizeof(uint64_t));
        entry.run();
      }
      reach_fault_point(FaultPoint::index_rows_written);
      transaction.commit();
      reach_fault_point(FaultPoint::index_committed);
#ifdef FLASHPS_TEST_BREAK_REORDER_COMMIT
      segment_.flush();  // broken on purpose: the index row is durable before the bytes it points at
#endif
      segment_.keep();  // from here the index owns the file
    }
    auto capture = open_store_capture(state_, capture_id, segment_name_);  // pins it against eviction
    if (quota > 0) store_->evict_to(quota);
    return capture;
  }

 private:
  std::shared_ptr<ActivationStore> store_;
  std::shared_ptr<ActivationStore::State> state_;
  engine::CaptureId id_;
  std::string segment_name_;
  SegmentWriter segment_;
  std::vector<EntryRecord> records_;
  bool committed_ = false;
};

}  // namespace

std::unique_ptr<engine::CaptureWriter> ActivationStore::begin(const engine::CaptureId& id) {
  state_->require_writable("templates are not registered");  // before any work is done for it
  return std::make_unique<StoreWriter>(shared_from_this(), state_, id);
}

}  // namespace flashps::cache
