// The host-memory tier of the activation store: whole entries kept in RAM, least recently used
// evicted first by bytes. Entries of captures pinned by a running edit are never evicted.
#pragma once
#include <ATen/Tensor.h>

#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <tuple>

#include "engine/capture.h"

namespace flashps::cache {

struct HostKey {
  int64_t capture_id = 0;
  engine::EntryKey entry;
  bool operator<(const HostKey& other) const {
    return std::tie(capture_id, entry) < std::tie(other.capture_id, other.entry);
  }
};

class HostTier {
 public:
  explicit HostTier(int64_t capacity_bytes) : capacity_(capacity_bytes) {}

  // Inserts (or refreshes) an entry; evicts unpinned entries, oldest first, to stay within the
  // capacity. Returns false (and keeps nothing) if the entry cannot fit.
  bool put(const HostKey& key, const at::Tensor& tensor);
  at::Tensor get(const HostKey& key);  // undefined on a miss; marks the entry recently used
  // As get(), but a miss is not counted: for callers that fall back to get() on a miss.
  at::Tensor find(const HostKey& key);
  bool contains(const HostKey& key) const;

  void pin(int64_t capture_id);
  void unpin(int64_t capture_id);
  bool pinned(int64_t capture_id) const;
  void erase_capture(int64_t capture_id);

  int64_t bytes() const;
  int64_t capacity() const { return capacity_; }
  int64_t hits() const { return hits_; }
  int64_t misses() const { return misses_; }

 private:
  void evict_for(int64_t needed);

  struct Slot {
    at::Tensor tensor;
    std::list<HostKey>::iterator position;
  };
  const int64_t capacity_;
  mutable std::mutex mutex_;
  std::map<HostKey, Slot> entries_;
  std::list<HostKey> order_;  // front = most recently used
  std::map<int64_t, int> pins_;
  int64_t bytes_ = 0, hits_ = 0, misses_ = 0;
};

}  // namespace flashps::cache
