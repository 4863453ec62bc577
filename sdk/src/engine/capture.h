// Captured activations of a template run, and the storage interface behind them. The engine
// only sees these interfaces: captures live in memory (MemoryCaptureStore, here) or in the
// SQLite-indexed activation store (cache/activation_store.h), and neither the engine nor the
// models know which.
//
// A capture holds, per (denoising step, block, slot), one tensor with a row per image token of
// the template: slot "k"/"v" (cache mode kv), "hidden" (cache mode hidden) and "output" (the
// model output rows, block = kOutputBlock). Readers fetch only the rows an edit needs.
#pragma once
#include <ATen/Tensor.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "engine/cache_mode.h"

namespace flashps::engine {

enum class Slot { keys, values, hidden, output };
const char* slot_name(Slot slot);

constexpr int kOutputBlock = -1;

struct EntryKey {
  int step = 0;
  int block = 0;
  Slot slot = Slot::hidden;
  bool operator<(const EntryKey& other) const {
    return std::tie(step, block, slot) < std::tie(other.step, other.block, other.slot);
  }
};

// Everything that changes the captured activations; two runs with equal ids are interchangeable.
struct CaptureId {
  std::string template_hash;  // content hash of the processed template (image + mask + conditioning)
  std::string model_fingerprint;
  std::string config;  // canonical text of size, steps, schedule, strength, seed, dtype, kinds
  bool operator<(const CaptureId& other) const {
    return std::tie(template_hash, model_fingerprint, config) <
           std::tie(other.template_hash, other.model_fingerprint, other.config);
  }
  std::string text() const { return template_hash + "|" + model_fingerprint + "|" + config; }
};

class Capture {
 public:
  virtual ~Capture() = default;
  virtual bool contains(const EntryKey& key) const = 0;
  // Rows `rows` (int64, sorted) of an entry, as a new tensor [rows, width]. Throws Error if the
  // entry is missing or damaged (the engine then computes that block instead).
  virtual at::Tensor read_rows(const EntryKey& key, const at::Tensor& rows) const = 0;
  virtual int64_t bytes() const = 0;
  // The whole entry [rows, width] when it is already in host memory, shared, not copied (the
  // caller must not write to it); undefined otherwise. Lets a CPU replay attend to cached keys
  // and values in place instead of gathering their rows first.
  virtual at::Tensor resident_entry(const EntryKey& key) const {
    (void)key;
    return {};
  }
  // Expected read bandwidth for this capture's entries given the tier they are in (host memory
  // or disk), for the planner's load-time estimates; 0 = unknown (the engine's default).
  virtual double expected_load_bytes_per_second() const { return 0.0; }
};

class CaptureWriter {
 public:
  virtual ~CaptureWriter() = default;
  virtual void put(const EntryKey& key, const at::Tensor& rows) = 0;  // copies
  // Makes the capture visible to readers atomically; before this nothing is visible.
  virtual std::shared_ptr<const Capture> commit() = 0;
};

class CaptureStore {
 public:
  virtual ~CaptureStore() = default;
  virtual std::shared_ptr<const Capture> find(const CaptureId& id) = 0;
  virtual std::unique_ptr<CaptureWriter> begin(const CaptureId& id) = 0;
  // Why begin() would refuse every capture (a read-only store), naming the fix; empty when it
  // would not. Registration checks it first so it can skip with a note instead of failing.
  virtual std::string why_unwritable() const { return {}; }
};

// Keeps captures in host memory (the tier every store has).
class MemoryCaptureStore : public CaptureStore {
 public:
  std::shared_ptr<const Capture> find(const CaptureId& id) override;
  std::unique_ptr<CaptureWriter> begin(const CaptureId& id) override;
  size_t size() const;

 private:
  friend class MemoryCaptureWriter;
  void publish(const CaptureId& id, std::shared_ptr<const Capture> capture);
  mutable std::mutex mutex_;
  std::map<CaptureId, std::shared_ptr<const Capture>> captures_;
};

}  // namespace flashps::engine
