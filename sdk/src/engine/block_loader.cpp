#include "engine/block_loader.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>

#include "core/diagnostics/error.h"
#include "core/runtime/thread_clock.h"

#ifdef FLASHPS_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace flashps::engine {
namespace {

#ifdef FLASHPS_WITH_CUDA
// Host rows -> device on the loader's side stream; the returned event marks completion.
at::Tensor copy_on_side_stream(const at::Tensor& rows, at::Device device, std::shared_ptr<void>& ready) {
  c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device.index());
  c10::cuda::CUDAStreamGuard guard(side);
  at::Tensor pinned = rows.is_pinned() ? rows : rows.pin_memory();
  at::Tensor on_device = pinned.to(device, /*non_blocking=*/true);
  auto event = std::make_shared<at::cuda::CUDAEvent>();
  event->record(side);
  ready = event;
  return on_device;
}
#endif

at::Tensor to_device(const at::Tensor& rows, at::Device device, std::shared_ptr<void>& ready) {
  if (device.is_cpu()) return rows;
#ifdef FLASHPS_WITH_CUDA
  if (device.is_cuda()) return copy_on_side_stream(rows, device, ready);
#endif
  (void)ready;
  return rows.to(device);
}

// Makes the current (compute) stream wait for an entry's copy, and tells the caching allocator
// that the compute stream uses the memory, so it is not recycled while kernels still read it.
void wait_for_copy(const LoadedEntry& entry) {
#ifdef FLASHPS_WITH_CUDA
  if (entry.ready && entry.rows.defined() && entry.rows.is_cuda()) {
    c10::cuda::CUDAStream compute = c10::cuda::getCurrentCUDAStream(entry.rows.device().index());
    static_cast<at::cuda::CUDAEvent*>(entry.ready.get())->block(compute);
    c10::cuda::CUDACachingAllocator::recordStream(entry.rows.storage().data_ptr(), compute);
  }
#else
  (void)entry;
#endif
}

}  // namespace

BlockLoader::BlockLoader(std::shared_ptr<const Capture> capture, std::vector<EntryKey> order,
                         at::Tensor rows, at::Device device, int depth, std::vector<Slot> shared_slots)
    : BlockLoader(std::move(capture), order, std::vector<at::Tensor>(order.size(), rows), device, depth,
                  std::move(shared_slots)) {}

BlockLoader::BlockLoader(std::shared_ptr<const Capture> capture, std::vector<EntryKey> order,
                         std::vector<at::Tensor> rows_per_entry, at::Device device, int depth,
                         std::vector<Slot> shared_slots)
    : capture_(std::move(capture)),
      order_(std::move(order)),
      rows_(std::move(rows_per_entry)),
      device_(device),
      depth_(depth < 1 ? 1 : static_cast<size_t>(depth)),
      shared_slots_(std::move(shared_slots)) {
  if (rows_.size() != order_.size()) throw Error("cache loader: one row set per planned entry expected");
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
    load(i, entry);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ready_.push_back(std::move(entry));
    }
    changed_.notify_all();
  }
}

void BlockLoader::load(size_t index, LoadedEntry& entry) const {
  try {
    const bool on_cpu = device_.is_cpu();
    if (on_cpu && std::find(shared_slots_.begin(), shared_slots_.end(), entry.key.slot) != shared_slots_.end()) {
      at::Tensor whole = capture_->resident_entry(entry.key);
      if (whole.defined()) {
        entry.rows = whole;
        entry.whole_entry = true;
        entry.bytes = whole.numel() * whole.element_size();  // read in place by the compute
        return;
      }
    }
    // On the CPU the loader shares cores with the compute threads: its own CPU time is what a
    // load costs (wall time would count the time it waited for a core). Elsewhere the copy is
    // the device's, and wall time is what there is.
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = on_cpu ? thread_cpu_seconds() : 0.0;
    at::Tensor rows = capture_->read_rows(entry.key, rows_[index]);
    entry.rows = to_device(rows, device_, entry.ready);
    entry.bytes = rows.numel() * rows.element_size();
    entry.load_seconds = on_cpu ? thread_cpu_seconds() - cpu_start
                                : std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } catch (const std::exception& error) {
    entry.error = error.what();
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
  wait_for_copy(entry);
  return entry;
}

}  // namespace flashps::engine
