#include <ATen/ATen.h>

#include "core/diagnostics/error.h"
#include "core/kernels/row_gather.h"
#include "engine/capture.h"

namespace flashps::engine {

const char* slot_name(Slot slot) {
  switch (slot) {
    case Slot::keys: return "k";
    case Slot::values: return "v";
    case Slot::hidden: return "hidden";
    case Slot::output: return "output";
  }
  return "?";
}

namespace {

class MemoryCapture : public Capture {
 public:
  explicit MemoryCapture(std::map<EntryKey, at::Tensor> entries) : entries_(std::move(entries)) {
    for (const auto& [key, tensor] : entries_) bytes_ += tensor.numel() * tensor.element_size();
  }
  bool contains(const EntryKey& key) const override { return entries_.count(key) > 0; }
  at::Tensor read_rows(const EntryKey& key, const at::Tensor& rows) const override {
    auto found = entries_.find(key);
    if (found == entries_.end())
      throw Error(std::string("capture has no entry for step ") + std::to_string(key.step) +
                  ", block " + std::to_string(key.block) + ", slot " + slot_name(key.slot));
    return gather_rows_single_thread(found->second, rows);
  }
  at::Tensor resident_entry(const EntryKey& key) const override {
    auto found = entries_.find(key);
    return found == entries_.end() ? at::Tensor() : found->second;
  }
  int64_t bytes() const override { return bytes_; }

 private:
  std::map<EntryKey, at::Tensor> entries_;
  int64_t bytes_ = 0;
};

}  // namespace

class MemoryCaptureWriter : public CaptureWriter {
 public:
  MemoryCaptureWriter(MemoryCaptureStore& store, CaptureId id) : store_(store), id_(std::move(id)) {}
  void put(const EntryKey& key, const at::Tensor& rows) override {
    entries_[key] = rows.detach().to(at::kCPU).clone();
  }
  std::shared_ptr<const Capture> commit() override {
    auto capture = std::make_shared<MemoryCapture>(std::move(entries_));
    store_.publish(id_, capture);
    return capture;
  }

 private:
  MemoryCaptureStore& store_;
  CaptureId id_;
  std::map<EntryKey, at::Tensor> entries_;
};

std::shared_ptr<const Capture> MemoryCaptureStore::find(const CaptureId& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = captures_.find(id);
  return found == captures_.end() ? nullptr : found->second;
}

std::unique_ptr<CaptureWriter> MemoryCaptureStore::begin(const CaptureId& id) {
  return std::make_unique<MemoryCaptureWriter>(*this, id);
}

size_t MemoryCaptureStore::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return captures_.size();
}

void MemoryCaptureStore::publish(const CaptureId& id, std::shared_ptr<const Capture> capture) {
  std::lock_guard<std::mutex> lock(mutex_);
  captures_[id] = std::move(capture);
}

}  // namespace flashps::engine
