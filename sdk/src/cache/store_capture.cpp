// Reading a committed capture: host tier first, else only the requested rows from its segment.
#include <ATen/ATen.h>
#include <xxhash.h>

#include <chrono>

#include "cache/store_state.h"
#include "core/diagnostics/error.h"
#include "core/kernels/row_gather.h"

namespace flashps::cache {

uint64_t row_checksum(const void* data, size_t size) { return XXH3_64bits(data, size); }

double ActivationStore::State::disk_bytes_per_second() const {
  const int64_t nanoseconds = disk_read_nanoseconds;
  if (nanoseconds < 1000000 || bytes_read < (int64_t{16} << 20)) return 1.5e9;  // too little seen yet
  return double(bytes_read) / (nanoseconds * 1e-9);
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

namespace {

std::string describe(const engine::EntryKey& key) {
  return "step " + std::to_string(key.step) + " block " + std::to_string(key.block) + " " + engine::slot_name(key.slot);
}

void check_rows(ActivationStore::State& state, int64_t capture_id, const EntryRecord& record, const uint8_t* data,
                const std::vector<int64_t>& row_indices, int64_t row_bytes, const std::string& segment) {
  for (size_t i = 0; i < row_indices.size(); ++i) {
    if (row_checksum(data + i * row_bytes, row_bytes) != record.row_checksums[row_indices[i]]) {
      state.quarantine(capture_id, record.key);
      throw Error(segment + ": checksum mismatch in " + describe(record.key) + " row " +
                  std::to_string(row_indices[i]) + " (entry quarantined)");
    }
  }
}

class StoreCapture : public engine::Capture {
 public:
  StoreCapture(std::shared_ptr<ActivationStore::State> state, int64_t id, const std::string& segment)
      : state_(std::move(state)), id_(id), segment_(state_->segment_path(segment)) {
    for (EntryRecord& record : state_->load_entries(id_)) {
      bytes_ += record.length;
      records_.emplace(record.key, std::move(record));
    }
    state_->host.pin(id_);  // entries of a capture being replayed stay in the host tier
  }
  ~StoreCapture() override { state_->host.unpin(id_); }

  bool contains(const engine::EntryKey& key) const override {
    auto found = records_.find(key);
    return found != records_.end() && !found->second.quarantined;
  }

  at::Tensor read_rows(const engine::EntryKey& key, const at::Tensor& rows) const override {
    auto found = records_.find(key);
    if (found == records_.end()) throw Error(segment_.path() + ": no entry " + describe(key));
    EntryRecord& record = found->second;
    if (record.quarantined) throw Error(segment_.path() + ": entry " + describe(key) + " is quarantined");
    at::Tensor cached = state_->host.get({id_, key});
    if (cached.defined()) return gather_rows_single_thread(cached, rows);

    at::Tensor index = rows.to(at::kLong).contiguous();
    const int64_t* wanted = index.data_ptr<int64_t>();
    const int64_t count = index.numel();
    const int64_t row_bytes = record.width * static_cast<int64_t>(c10::elementSize(record.dtype));
    at::Tensor out = at::empty({count, record.width}, at::TensorOptions().dtype(record.dtype));
    auto* destination = static_cast<uint8_t*>(out.data_ptr());
    const auto read_start = std::chrono::steady_clock::now();
    // Runs of consecutive rows are read with one pread each: bytes moved ~ rows requested.
    for (int64_t i = 0; i < count;) {
      if (wanted[i] < 0 || wanted[i] >= record.rows)
        throw Error(segment_.path() + ": row " + std::to_string(wanted[i]) + " out of range in " + describe(key));
      int64_t run = 1;
      while (i + run < count && wanted[i + run] == wanted[i] + run) ++run;
      segment_.read(record.offset + wanted[i] * row_bytes, destination + i * row_bytes, run * row_bytes);
      i += run;
    }
    state_->bytes_read += count * row_bytes;
    state_->disk_read_nanoseconds += std::chrono::duration_cast<std::chrono::nanoseconds>(
                                         std::chrono::steady_clock::now() - read_start).count();
    if (state_->should_verify()) {
      std::vector<int64_t> indices(wanted, wanted + count);
      check_rows(*state_, id_, record, destination, indices, row_bytes, segment_.path());
    }
    return out;
  }

  int64_t bytes() const override { return bytes_; }

  at::Tensor resident_entry(const engine::EntryKey& key) const override {
    auto found = records_.find(key);
    if (found == records_.end() || found->second.quarantined) return {};
    return state_->host.find({id_, key});  // entries were verified when they entered the tier
  }

  double expected_load_bytes_per_second() const override {
    // Host hits cost a row gather (memory bandwidth); misses a disk read at the rate this
    // process has observed. Mixed captures: the harmonic blend by resident fraction.
    constexpr double kHostBytesPerSecond = 8e9;
    int64_t resident = 0;
    for (const auto& [key, record] : records_) resident += state_->host.contains({id_, key}) ? record.length : 0;
    const double fraction = bytes_ > 0 ? double(resident) / bytes_ : 0.0;
    return 1.0 / (fraction / kHostBytesPerSecond + (1 - fraction) / state_->disk_bytes_per_second());
  }

 private:
  std::shared_ptr<ActivationStore::State> state_;
  int64_t id_;
  SegmentReader segment_;
  mutable std::map<engine::EntryKey, EntryRecord> records_;
  int64_t bytes_ = 0;
};

}  // namespace

at::Tensor read_whole_entry(ActivationStore::State& state, int64_t capture_id, const SegmentReader& segment,
                            const EntryRecord& record) {
  at::Tensor out = at::empty({record.rows, record.width}, at::TensorOptions().dtype(record.dtype));
  segment.read(record.offset, out.data_ptr(), record.length);
  state.bytes_read += record.length;
  std::vector<int64_t> all(record.rows);
  for (int64_t i = 0; i < record.rows; ++i) all[i] = i;
  check_rows(state, capture_id, record, static_cast<const uint8_t*>(out.data_ptr()), all,
             record.width * static_cast<int64_t>(c10::elementSize(record.dtype)), segment.path());
  return out;
}

std::shared_ptr<const engine::Capture> open_store_capture(std::shared_ptr<ActivationStore::State> state,
                                                          int64_t capture_id, const std::string& segment) {
  return std::make_shared<StoreCapture>(std::move(state), capture_id, segment);
}

}  // namespace flashps::cache
