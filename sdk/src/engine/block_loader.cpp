#include "engine/block_loader.h"

#include <ATen/ATen.h>

#include <chrono>

#include "core/error.h"

namespace flashps::engine {

BlockLoader::BlockLoader(std::shared_ptr<const Capture> capture, std::vector<EntryKey> order,
                         at::Tensor rows, at::Device device, int depth)
    : capture_(std::move(capture)),
      order_(std::move(order)),
      rows_(std::move(rows)),
      device_(device),
      depth_(depth < 1 ? 1 : static_cast<size_t>(depth)) {
  if (!order_.empty()) thread_ = std::thread([this] { run(); });
}

BlockLoader::~BlockLoader() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void BlockLoader::run() {
  // The loader is a single thread: keep LibTorch's intra-op pool for the compute stream.
  for (size_t i = 0; i < order_.size(); ++i) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || i < consumed_ + depth_; });
      if (stopping_) return;
    }
    LoadedEntry entry;
    entry.key = order_[i];
    try {
      at::Tensor rows = capture_->read_rows(entry.key, rows_);
      entry.rows = device_.is_cpu() ? rows : rows.to(device_, /*non_blocking=*/true);
      entry.bytes = rows.numel() * rows.element_size();
    } catch (const std::exception& error) {
      entry.error = error.what();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ready_.push_back(std::move(entry));
    }
    changed_.notify_all();
  }
}

LoadedEntry BlockLoader::next(const EntryKey& expected) {
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  if (consumed_ >= order_.size()) throw Error("cache loader: no more planned entries");
  changed_.wait(lock, [&] { return !ready_.empty(); });
  LoadedEntry entry = std::move(ready_.front());
  ready_.pop_front();
  ++consumed_;
  wait_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  lock.unlock();
  changed_.notify_all();
  if (entry.key.step != expected.step || entry.key.block != expected.block ||
      entry.key.slot != expected.slot)
    throw Error("cache loader out of order: the model asked for a block the plan did not load");
  return entry;
}

}  // namespace flashps::engine
