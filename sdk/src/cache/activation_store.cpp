#include "cache/activation_store.h"

#include <ATen/ATen.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>

#include "cache/store_index.h"
#include "cache/store_state.h"
#include "core/diagnostics/error.h"
#include "core/diagnostics/log.h"

namespace flashps::cache {

namespace fs = std::filesystem;

VerifyPolicy verify_policy_from_name(const std::string& name) {
  if (name == "always") return VerifyPolicy::always;
  if (name == "sampled") return VerifyPolicy::sampled;
  if (name == "never") return VerifyPolicy::never;
  throw Error("unknown verify policy '" + name + "' (always, sampled, never)");
}

ActivationStore::State::State(ActivationStoreOptions opts)
    : options(std::move(opts)), host(options.host_capacity_bytes) {
  segments_dir = (fs::path(options.directory) / "segments").string();
  OpenedIndex index = open_store_index(options.directory, options.read_only);
  db = std::move(index.db);
  read_only = index.read_only;
  read_only_reason = std::move(index.read_only_reason);
  notes = std::move(index.notes);
}

std::string ActivationStore::State::read_only_message(const std::string& what) const {
  return options.directory + " is read-only, so " + what + " (" + read_only_reason + ")";
}

void ActivationStore::State::require_writable(const std::string& what) const {
  if (read_only) throw IoError(read_only_message(what));
}

std::vector<EntryRecord> ActivationStore::State::load_entries(int64_t capture_id) {
  std::lock_guard<std::recursive_mutex> lock(db->mutex());
  Statement query(*db,
                  "SELECT step, block, slot, offset, length, dtype, rows, width, row_checksums, quarantined "
                  "FROM entries WHERE capture_id=?");
  query.bind(1, capture_id);
  std::vector<EntryRecord> records;
  while (query.step()) {
    EntryRecord record;
    record.key = {static_cast<int>(query.integer(0)), static_cast<int>(query.integer(1)),
                  static_cast<engine::Slot>(query.integer(2))};
    record.offset = query.integer(3);
    record.length = query.integer(4);
    record.dtype = static_cast<at::ScalarType>(query.integer(5));
    record.rows = query.integer(6);
    record.width = query.integer(7);
    std::vector<uint8_t> blob = query.blob(8);
    record.quarantined = query.integer(9) != 0;
    if (blob.size() != static_cast<size_t>(record.rows) * sizeof(uint64_t) ||
        record.length != record.rows * record.width * static_cast<int64_t>(c10::elementSize(record.dtype)))
      record.quarantined = true;  // an inconsistent index row is never served
    record.row_checksums.resize(record.rows);
    if (!record.quarantined) std::memcpy(record.row_checksums.data(), blob.data(), blob.size());
    records.push_back(std::move(record));
  }
  return records;
}

void ActivationStore::State::quarantine(int64_t capture_id, const engine::EntryKey& key) {
  // Best effort: the damaged read fails either way; marking it only spares later reads.
  if (read_only) return;
  try {
    Transaction transaction(*db);
    Statement update(*db, "UPDATE entries SET quarantined=1 WHERE capture_id=? AND step=? AND block=? AND slot=?");
    update.bind(1, capture_id).bind(2, int64_t{key.step}).bind(3, int64_t{key.block});
    update.bind(4, static_cast<int64_t>(key.slot));
    update.run();
    transaction.commit();
  } catch (const SqliteError& error) {
    if (!error.disk_full() && !error.io_failed()) throw;
  }
}

void ActivationStore::State::remove_capture(int64_t capture_id, const std::string& segment) {
  // The bytes go first: on a full disk that makes the room the index's write needs. A row left
  // without its segment (a crash between the two) is a miss, and the next gc() removes it.
  // Readers that still have the segment open keep reading it; the space returns when they close.
  ::unlink(segment_path(segment).c_str());
  host.erase_capture(capture_id);
  Transaction transaction(*db);
  Statement remove(*db, "DELETE FROM captures WHERE id=?");
  remove.bind(1, capture_id);
  remove.run();
  transaction.commit();
}

std::shared_ptr<ActivationStore> ActivationStore::open(ActivationStoreOptions options) {
  std::vector<std::string> repairs;
  for (int attempt = 0;; ++attempt) {
    try {
      std::shared_ptr<ActivationStore> store(new ActivationStore(options));
      RecoveryReport report;
      if (!store->state_->read_only) {
        try {
          report = store->gc();
        } catch (const SqliteError& error) {
          if (error.corrupt()) throw;
          report.notes.push_back(std::string("recovery skipped: ") + error.what());  // e.g. a full disk
        }
      }
      auto& notes = store->state_->notes;
      notes.insert(notes.begin(), repairs.begin(), repairs.end());
      report.notes.insert(report.notes.begin(), notes.begin(), notes.end());
      store->open_report_ = std::move(report);
      return store;
    } catch (const SqliteError& error) {
      // An unreadable index (found opening it, or reading it to recover) is set aside once.
      if (!error.corrupt() || attempt > 0 || options.read_only) throw;
      const std::string note = set_aside_damaged_index(options.directory, error);
      if (!note.empty()) repairs.push_back(note);
    }
  }
}

ActivationStore::ActivationStore(ActivationStoreOptions options)
    : state_(std::make_shared<State>(std::move(options))) {}

ActivationStore::~ActivationStore() { wait_for_prefetches(); }

const ActivationStoreOptions& ActivationStore::options() const { return state_->options; }
bool ActivationStore::read_only() const { return state_->read_only; }

std::string ActivationStore::why_unwritable() const {
  return state_->read_only ? state_->read_only_message("templates are not registered") : std::string();
}

std::shared_ptr<const engine::Capture> ActivationStore::find(const engine::CaptureId& id) {
  int64_t capture_id = 0;
  std::string segment;
  {
    std::lock_guard<std::recursive_mutex> lock(state_->db->mutex());
    Statement query(*state_->db, "SELECT id, segment FROM captures WHERE template_hash=? AND model_fingerprint=? AND config=?");
    query.bind(1, id.template_hash).bind(2, id.model_fingerprint).bind(3, id.config);
    if (!query.step()) return nullptr;
    capture_id = query.integer(0);
    segment = query.text(1);
    query.reset();
  }
  if (!state_->read_only) {
    // Writes run in BEGIN IMMEDIATE transactions: an autocommit write first reads, and a WAL
    // read snapshot that another process moved past cannot be upgraded (busy, no retry).
    try {
      Transaction transaction(*state_->db);
      Statement touch(*state_->db, "UPDATE captures SET last_access=? WHERE id=?");
      touch.bind(1, now_seconds()).bind(2, capture_id);
      touch.run();
      transaction.commit();
    } catch (const SqliteError& error) {
      // A full disk: the hit still counts, only its LRU time is not updated.
      if (!error.disk_full() && !error.io_failed()) throw;
    }
  }
  try {
    return open_store_capture(state_, capture_id, segment);
  } catch (const Error&) {
    return nullptr;  // segment gone (removed by another process): a miss, computed in full
  }
}

void ActivationStore::prefetch(const engine::CaptureId& id) {
  std::shared_ptr<const engine::Capture> capture = find(id);
  if (!capture) return;
  int64_t capture_id = 0;
  std::string segment;
  {
    std::lock_guard<std::recursive_mutex> lock(state_->db->mutex());
    Statement query(*state_->db, "SELECT id, segment FROM captures WHERE template_hash=? AND model_fingerprint=? AND config=?");
    query.bind(1, id.template_hash).bind(2, id.model_fingerprint).bind(3, id.config);
    if (!query.step()) return;
    capture_id = query.integer(0);
    segment = query.text(1);
  }
  std::lock_guard<std::mutex> lock(prefetch_mutex_);
  prefetches_.emplace_back([state = state_, capture, capture_id, segment] {
    // `capture` pins the entries while they load, so the loads cannot evict each other.
    try {
#ifdef FLASHPS_WITH_CUDA
      // Page-locked, so host->device copies run asynchronously; only with a GPU present
      // (a CUDA LibTorch on a machine without one refuses to pin).
      const bool pin = at::hasCUDA();
#endif
      SegmentReader reader(state->segment_path(segment));
      for (const EntryRecord& record : state->load_entries(capture_id)) {
        if (record.quarantined || state->host.contains({capture_id, record.key})) continue;
        try {
          at::Tensor entry = read_whole_entry(*state, capture_id, reader, record);
#ifdef FLASHPS_WITH_CUDA
          if (pin) entry = entry.pin_memory();
#endif
          if (!state->host.put({capture_id, record.key}, entry)) break;
        } catch (const Error&) {
          // damaged entry: quarantined by the read; the edit computes that block
        }
      }
    } catch (const Error&) {
      // segment removed meanwhile: nothing to prefetch
    } catch (const std::exception& error) {
      // Prefetching only saves time: a failure (memory, pinning) must not end the process.
      log::warning(std::string("prefetch stopped: ") + error.what());
    }
  });
}

void ActivationStore::wait_for_prefetches() {
  std::vector<std::thread> running;
  {
    std::lock_guard<std::mutex> lock(prefetch_mutex_);
    running.swap(prefetches_);
  }
  for (std::thread& thread : running) thread.join();
}

std::vector<StoredCapture> ActivationStore::list() {
  std::lock_guard<std::recursive_mutex> lock(state_->db->mutex());
  Statement query(*state_->db,
                  "SELECT c.id, c.template_hash, c.model_fingerprint, c.config, c.segment, c.bytes, c.entries, "
                  "c.created, c.last_access, (SELECT COUNT(*) FROM entries e WHERE e.capture_id=c.id AND "
                  "e.quarantined=1) FROM captures c ORDER BY c.last_access DESC");
  std::vector<StoredCapture> captures;
  while (query.step()) {
    StoredCapture capture;
    capture.id = query.integer(0);
    capture.capture_id = {query.text(1), query.text(2), query.text(3)};
    capture.segment = query.text(4);
    capture.bytes = query.integer(5);
    capture.entries = query.integer(6);
    capture.created = query.real(7);
    capture.last_access = query.real(8);
    capture.quarantined = query.integer(9);
    captures.push_back(std::move(capture));
  }
  return captures;
}

StoreStats ActivationStore::stats() {
  StoreStats stats;
  for (const StoredCapture& capture : list()) {
    ++stats.captures;
    stats.entries += capture.entries;
    stats.bytes += capture.bytes;
    stats.quarantined += capture.quarantined;
  }
  std::error_code error;
  for (const auto& file : fs::directory_iterator(state_->segments_dir, error)) {
    if (file.path().extension() != ".seg") continue;  // "*.seg.new": a writer locking its file
    ++stats.segment_files;
    stats.segment_bytes += static_cast<int64_t>(file.file_size(error));
  }
  stats.host_bytes = state_->host.bytes();
  stats.host_capacity = state_->host.capacity();
  stats.host_hits = state_->host.hits();
  stats.host_misses = state_->host.misses();
  stats.disk_quota = state_->options.disk_quota_bytes;
  stats.bytes_read_from_disk = state_->bytes_read;
  return stats;
}

VerifyReport ActivationStore::verify(const ProgressCallback& progress) {
  VerifyReport report;
  const auto captures = list();
  int done = 0;
  for (const StoredCapture& capture : captures) {
    try {
      SegmentReader reader(state_->segment_path(capture.segment));
      for (const EntryRecord& record : state_->load_entries(capture.id)) {
        if (record.quarantined) continue;
        ++report.entries_checked;
        try {
          read_whole_entry(*state_, capture.id, reader, record);
        } catch (const Error& error) {
          state_->quarantine(capture.id, record.key);
          ++report.damaged;
          report.problems.push_back(error.what());
        }
      }
    } catch (const Error& error) {
      ++report.damaged;
      report.problems.push_back(error.what());
    }
    report_progress(progress, {"verify", ++done, static_cast<int>(captures.size()), 0.0});
  }
  return report;
}

int64_t ActivationStore::evict_to(int64_t max_bytes) {
  state_->require_writable("nothing can be evicted");
  auto captures = list();  // most recently used first
  int64_t total = 0;
  for (const StoredCapture& capture : captures) total += capture.bytes;
  int64_t freed = 0;
  for (auto it = captures.rbegin(); it != captures.rend() && total > max_bytes; ++it) {
    if (state_->host.pinned(it->id)) continue;  // in use by an edit in this process
    state_->remove_capture(it->id, it->segment);
    total -= it->bytes;
    freed += it->bytes;
  }
  return freed;
}

int ActivationStore::remove(const std::string& template_hash_prefix) {
  if (template_hash_prefix.empty()) throw Error("cache rm: give a template hash or a prefix of one");
  state_->require_writable("nothing can be removed");
  int removed = 0;
  for (const StoredCapture& capture : list())
    if (capture.capture_id.template_hash.rfind(template_hash_prefix, 0) == 0) {
      state_->remove_capture(capture.id, capture.segment);
      ++removed;
    }
  return removed;
}

RecoveryReport ActivationStore::gc() {
  state_->require_writable("it cannot be repaired");
  RecoveryReport report;
  std::set<std::string> referenced;
  std::vector<StoredCapture> broken;
  for (const StoredCapture& capture : list()) {
    referenced.insert(capture.segment);
    // An index row is kept only if its segment holds every byte its entries point at.
    int64_t needed = 0;
    for (const EntryRecord& record : state_->load_entries(capture.id))
      needed = std::max(needed, record.offset + record.length);
    std::error_code error;
    const auto size = fs::file_size(state_->segment_path(capture.segment), error);
    if (error || static_cast<int64_t>(size) < needed) broken.push_back(capture);
  }
  // Orphans first: removing them needs no index write, and frees the room later writes need.
  std::error_code error;
  for (const auto& file : fs::directory_iterator(state_->segments_dir, error)) {
    const std::string name = file.path().filename().string();
    if (referenced.count(name)) continue;
    // "*.seg.new" exist for microseconds while a writer locks its file; older ones are litter
    // of a writer killed in that window.
    if (file.path().extension() == ".new") {
      const auto age = fs::file_time_type::clock::now() - fs::last_write_time(file.path(), error);
      if (error || age < std::chrono::seconds(10)) continue;
    }
    // Unreferenced and unlocked: its writer died before committing. Locked: still being written.
    if (!segment_unlocked(file.path().string())) continue;
    // Re-check under the index lock: the writer may have committed between list() and now.
    std::lock_guard<std::recursive_mutex> lock(state_->db->mutex());
    Statement query(*state_->db, "SELECT 1 FROM captures WHERE segment=?");
    query.bind(1, name);
    if (query.step()) continue;
    report.reclaimed_bytes += static_cast<int64_t>(file.file_size(error));
    fs::remove(file.path(), error);
    ++report.removed_segments;
  }
  for (const StoredCapture& capture : broken) {
    state_->remove_capture(capture.id, capture.segment);
    ++report.removed_captures;
    report.notes.push_back("removed capture " + capture.capture_id.template_hash.substr(0, 12) +
                           ": its segment is missing or truncated");
  }
  return report;
}

std::string default_store_directory() {
  if (const char* dir = std::getenv("FLASHPS_CACHE_DIR")) return dir;
  fs::path base;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME")) base = xdg;
  else if (const char* home = std::getenv("HOME")) base = fs::path(home) / ".cache";
  else base = fs::temp_directory_path();
  return (base / "flashps" / "store").string();
}

}  // namespace flashps::cache
