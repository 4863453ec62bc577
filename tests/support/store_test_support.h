// Helpers for the activation store tests: deterministic captures written without ATen's thread
// pool (the crash and multi-process tests fork).
#pragma once
#include <ATen/ATen.h>

#include <random>
#include <string>

#include "cache/activation_store.h"

namespace flashps::test {

inline at::Tensor pattern_rows(int64_t rows, int64_t width, uint64_t seed) {
  at::Tensor tensor = at::empty({rows, width});
  std::mt19937_64 generator(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  float* data = tensor.data_ptr<float>();
  for (int64_t i = 0; i < rows * width; ++i) data[i] = value(generator);
  return tensor;
}

// A store at `directory` with a 1 MiB host tier, so most reads go to the segment files.
inline std::shared_ptr<cache::ActivationStore> open_small_store(const std::string& directory) {
  cache::ActivationStoreOptions options;
  options.directory = directory;
  options.host_capacity_bytes = 1 << 20;
  return cache::ActivationStore::open(options);
}

inline engine::CaptureId capture_name(int index) {
  return {"template" + std::to_string(index), "model", "config"};
}

// Steps x blocks entries of [rows, width] "hidden" rows, contents derived from `index`.
inline void write_capture(cache::ActivationStore& store, int index, int steps = 2, int blocks = 3,
                          int64_t rows = 64, int64_t width = 32) {
  auto writer = store.begin(capture_name(index));
  for (int step = 0; step < steps; ++step)
    for (int block = 0; block < blocks; ++block)
      writer->put({step, block, engine::Slot::hidden}, pattern_rows(rows, width, index * 1000 + step * 10 + block));
  writer->commit();
}

inline bool capture_intact(cache::ActivationStore& store, int index, int steps = 2, int blocks = 3,
                           int64_t rows = 64, int64_t width = 32) {
  auto capture = store.find(capture_name(index));
  if (!capture) return false;
  at::Tensor all = at::arange(rows);
  for (int step = 0; step < steps; ++step)
    for (int block = 0; block < blocks; ++block)
      if (!at::equal(capture->read_rows({step, block, engine::Slot::hidden}, all),
                     pattern_rows(rows, width, index * 1000 + step * 10 + block)))
        return false;
  return true;
}

}  // namespace flashps::test
