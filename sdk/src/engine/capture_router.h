// Template registration: a full computation whose routers record, for every step and block, the
// activations of every image token (a later edit's mask is not known yet).
#pragma once
#include "engine/capture.h"
#include "engine/token_router.h"

namespace flashps::engine {

class CaptureRouter : public TokenRouter {
 public:
  CaptureRouter(CaptureWriter& writer, bool capture_kv, bool capture_hidden)
      : writer_(writer), capture_kv_(capture_kv), capture_hidden_(capture_hidden) {}
  void set_step(int step) { step_ = step; }

  BlockTokens before_block(int) override { return {}; }
  bool wants_keys_values(int) const override { return capture_kv_; }
  void record_keys_values(int block, const at::Tensor& keys, const at::Tensor& values) override {
    writer_.put({step_, block, Slot::keys}, keys);
    writer_.put({step_, block, Slot::values}, values);
  }
  bool wants_block_output(int) const override { return capture_hidden_; }
  void record_block_output(int block, const at::Tensor& image_rows) override {
    writer_.put({step_, block, Slot::hidden}, image_rows);
  }
  at::Tensor finish_output(const at::Tensor& carried_output) override {
    writer_.put({step_, kOutputBlock, Slot::output}, carried_output);
    return carried_output;
  }

 private:
  CaptureWriter& writer_;
  bool capture_kv_, capture_hidden_;
  int step_ = 0;
};

}  // namespace flashps::engine
