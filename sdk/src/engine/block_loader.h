// Loads a replay's cached rows in execution order on a background thread, a bounded number of
// blocks ahead of the compute (double buffering by default), so loading overlaps compute.
// On CUDA builds (FLASHPS_WITH_CUDA) the thread copies the rows from pinned host memory to the
// device on a side stream and records an event; next() makes the compute stream wait for that
// event only, so copies overlap kernels instead of serialising on the default stream.
#pragma once
#include <ATen/Tensor.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/capture.h"

namespace flashps::engine {

struct LoadedEntry {
  EntryKey key;
  at::Tensor rows;    // undefined if the load failed
  std::string error;  // why it failed (damaged or missing entry)
  int64_t bytes = 0;
  bool whole_entry = false;  // `rows` is the whole resident entry, shared in place, not gathered
  double load_seconds = 0;  // the loader's time reading it (and issuing its copy)
  std::shared_ptr<void> ready;  // CUDA: the copy's completion event (compute waits on it)
};

class BlockLoader {
 public:
  // Loads `order` one by one (rows `rows` of each entry) onto `device`, at most `depth` ahead.
  // Entries whose slot is in `shared_slots` and that are resident in host memory are handed over
  // whole and in place (LoadedEntry::whole_entry) instead of as a gathered copy (CPU only).
  BlockLoader(std::shared_ptr<const Capture> capture, std::vector<EntryKey> order, at::Tensor rows,
              at::Device device, int depth, std::vector<Slot> shared_slots = {});
  // The same with each entry's own rows (`rows_per_entry[i]` of `order[i]`): models whose blocks
  // run at different token resolutions (UNets).
  BlockLoader(std::shared_ptr<const Capture> capture, std::vector<EntryKey> order,
              std::vector<at::Tensor> rows_per_entry, at::Device device, int depth,
              std::vector<Slot> shared_slots = {});
  ~BlockLoader();  // stops the thread
  BlockLoader(const BlockLoader&) = delete;
  BlockLoader& operator=(const BlockLoader&) = delete;

  // Waits for the next entry in order; its key must equal `expected` (else Error).
  LoadedEntry next(const EntryKey& expected);
  double wait_seconds() const { return wait_seconds_; }

 private:
  void run();
  void load(size_t index, LoadedEntry& entry) const;

  std::shared_ptr<const Capture> capture_;
  std::vector<EntryKey> order_;
  std::vector<at::Tensor> rows_;  // per entry
  at::Device device_;
  size_t depth_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<LoadedEntry> ready_;
  std::vector<Slot> shared_slots_;
  size_t consumed_ = 0;
  bool stopping_ = false;
  double wait_seconds_ = 0;
  std::thread thread_;
};

}  // namespace flashps::engine
