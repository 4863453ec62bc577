#include "cache/host_tier.h"

namespace flashps::cache {
namespace {

int64_t byte_size(const at::Tensor& tensor) { return tensor.numel() * static_cast<int64_t>(tensor.element_size()); }

}  // namespace

bool HostTier::put(const HostKey& key, const at::Tensor& tensor) {
  std::lock_guard<std::mutex> lock(mutex_);
  const int64_t size = byte_size(tensor);
  if (size > capacity_) return false;
  auto found = entries_.find(key);
  if (found != entries_.end()) {
    bytes_ -= byte_size(found->second.tensor);
    order_.erase(found->second.position);
    entries_.erase(found);
  }
  evict_for(size);
  if (bytes_ + size > capacity_) return false;  // everything left is pinned
  order_.push_front(key);
  entries_[key] = {tensor, order_.begin()};
  bytes_ += size;
  return true;
}

void HostTier::evict_for(int64_t needed) {
  auto position = order_.end();
  while (bytes_ + needed > capacity_ && position != order_.begin()) {
    --position;
    if (pins_.count(position->capture_id)) continue;
    auto found = entries_.find(*position);
    bytes_ -= byte_size(found->second.tensor);
    entries_.erase(found);
    position = order_.erase(position);
  }
}

at::Tensor HostTier::get(const HostKey& key) {
  at::Tensor tensor = find(key);
  if (!tensor.defined()) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++misses_;
  }
  return tensor;
}

at::Tensor HostTier::find(const HostKey& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = entries_.find(key);
  if (found == entries_.end()) return {};
  ++hits_;
  order_.splice(order_.begin(), order_, found->second.position);
  return found->second.tensor;
}

bool HostTier::contains(const HostKey& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.count(key) > 0;
}

void HostTier::pin(int64_t capture_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++pins_[capture_id];
}

void HostTier::unpin(int64_t capture_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = pins_.find(capture_id);
  if (found != pins_.end() && --found->second == 0) pins_.erase(found);
}

bool HostTier::pinned(int64_t capture_id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pins_.count(capture_id) > 0;
}

void HostTier::erase_capture(int64_t capture_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->first.capture_id == capture_id) {
      bytes_ -= byte_size(it->second.tensor);
      order_.erase(it->second.position);
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
}

int64_t HostTier::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

}  // namespace flashps::cache
