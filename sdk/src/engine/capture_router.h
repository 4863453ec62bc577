// Template registration: a full computation whose routers record, for every step and block, the
// activations of every image token (a later edit's mask is not known yet).
#pragma once
#include <optional>

#include "engine/capture.h"
#include "engine/token_router.h"

namespace flashps::engine {

class CaptureRouter : public TokenRouter {
 public:
  // storage_dtype: the dtype captures are stored in (e.g. bfloat16 for a bfloat16 model, half
  // the bytes); undefined keeps the activations' own dtype.
  CaptureRouter(CaptureWriter& writer, bool capture_kv, bool capture_hidden,
                std::optional<at::ScalarType> storage_dtype = std::nullopt)
      : writer_(writer), capture_kv_(capture_kv), capture_hidden_(capture_hidden), storage_dtype_(storage_dtype) {}
  void set_step(int step) { step_ = step; }

  BlockTokens before_block(int) override { return {}; }
  bool wants_keys_values(int) const override { return capture_kv_; }
  void record_keys_values(int block, const at::Tensor& keys, const at::Tensor& values) override {
    writer_.put({step_, block, Slot::keys}, stored(keys));
    writer_.put({step_, block, Slot::values}, stored(values));
  }
  bool wants_block_output(int) const override { return capture_hidden_; }
  void record_block_output(int block, const at::Tensor& image_rows) override {
    writer_.put({step_, block, Slot::hidden}, stored(image_rows));
  }
  at::Tensor finish_output(const at::Tensor& carried_output) override {
    writer_.put({step_, kOutputBlock, Slot::output}, carried_output);
    return carried_output;
  }

 private:
  at::Tensor stored(const at::Tensor& rows) const {
    return storage_dtype_ ? rows.to(*storage_dtype_) : rows;
  }
  CaptureWriter& writer_;
  bool capture_kv_, capture_hidden_;
  std::optional<at::ScalarType> storage_dtype_;
  int step_ = 0;
};

}  // namespace flashps::engine
