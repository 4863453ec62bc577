// Replay of a registered template for one edit, written once for every model family (FlashPS
// §3.2): find the capture, check it holds the activations the cache mode needs, widen the edit's
// token mask to the tokens the template run itself regenerated, plan per block whether loading
// pays (Algorithm 1), and drive the ReplayRouter, restarting it when a batch-mate's unreadable
// entry stopped a step. A model family only describes its blocks for the edit (ReplayBlocks);
// it does not orchestrate caching.
//
//   std::vector<std::string> notes;
//   auto session = ReplaySession::attach(store, id, mask, settings, describe_blocks, notes);
//   if (session) call.router = &session->router();   // else: compute in full, `notes` says why
#pragma once
#include <ATen/Device.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/cache_mode.h"
#include "engine/capture.h"
#include "engine/cost_model.h"
#include "engine/speed_estimator.h"
#include "engine/replay_router.h"
#include "engine/token_mask.h"

namespace flashps::engine {

// A model family's blocks for one edit, in execution order.
struct ReplayBlocks {
  std::vector<BlockWork> work;
  std::vector<TokenCounts> counts;     // per block
  // Per block, for models whose blocks see different token grids (a UNet's levels; hidden
  // replay only). Empty: every block carries the edit's own mask.
  std::vector<TokenMask> block_masks;
};
// The family's blocks for the edit's final (widened) token mask.
using DescribeBlocks = std::function<ReplayBlocks(const TokenMask& mask)>;

struct ReplaySettings {
  CacheMode requested = CacheMode::automatic;
  // Why this model cannot replay kv (empty: it can); a kv request is refused with it.
  std::string why_no_kv;
  std::string token_unit = "tokens";  // what notes call a mask element ("latent pixels")
  int first_step = 0, end_step = 0;   // the absolute steps this edit runs: [first, end)
  bool use_planner = true;
  DeviceSpeed speed;                  // the device's speed model for hidden replays, the ones it plans
                                      // (kv replays load every block); load speed from the capture's tier
  at::Device device = at::Device(at::kCPU);
};

class ReplaySession {
 public:
  // The edit's replay, or null with a note in `notes` when it computes in full (no template for
  // these settings, a capture without the mode's activations, nothing left to replay). `mask`
  // is widened in place to the tokens the template's own mask regenerated. A kv request of a
  // model that cannot replay kv throws UnsupportedError. The loader starts reading at once, so
  // a queued edit prefetches its cache.
  static std::unique_ptr<ReplaySession> attach(CaptureStore& store, const CaptureId& id, TokenMask& mask,
                                               const ReplaySettings& settings, const DescribeBlocks& describe,
                                               std::vector<std::string>& notes);
  // Whether attach() would replay; reads the index and the template's mask only.
  static bool would_replay(CaptureStore& store, const CaptureId& id, const TokenMask& mask,
                           const ReplaySettings& settings);

  ReplayRouter& router() { return *router_; }
  CacheMode mode() const { return mode_; }            // kv or hidden
  // Block FLOPs of one step as planned (cached blocks compute only their carried rows).
  double flops_per_step() const { return flops_per_step_; }
  double compute_saving() const { return compute_saving_; }  // full FLOPs / replay FLOPs
  // Whether this edit's own entry proved unreadable (the step threw ReplayUnavailable): it must
  // be computed without the capture.
  bool unavailable() const { return router_->unavailable(); }
  // A batch-mate's unreadable entry stopped the step: replay again from `step` on.
  void restart_at(int step);
  // Totals over every router this session ran (restarts included).
  ReplayStats stats();
  // The note finishing an edit adds when entries fell back to compute; empty when none did.
  std::string failed_entries_note();

 private:
  ReplaySession() = default;
  void start_router(int first_step);

  std::shared_ptr<const Capture> capture_;
  TokenMask mask_;
  std::vector<TokenMask> block_masks_;
  CacheMode mode_ = CacheMode::hidden;
  std::vector<bool> use_cache_;
  int end_step_ = 0;
  at::Device device_ = at::Device(at::kCPU);
  std::unique_ptr<ReplayRouter> router_;
  ReplayStats earlier_;  // of routers replaced by restart_at
  double compute_saving_ = 1.0;
  double flops_per_step_ = 0;
};

// One model call for a batch whose members may replay. kv replay stops the whole call when an
// entry proves unreadable (ReplayUnavailable): the member it belongs to goes to
// `compute_in_full` (which must drop its session), the others restart at their current step,
// and `call` runs again; it must read the sessions afresh each time. Hidden replay never stops
// a call (an unreadable block computes instead).
void call_with_replay_recovery(size_t members, const std::function<ReplaySession*(size_t)>& session_of,
                               const std::function<int(size_t)>& current_step_of,
                               const std::function<void()>& call,
                               const std::function<void(size_t, const std::string&)>& compute_in_full);

// What a step of an edit replaying `session` runs, for the speed estimate (null: in full).
StepKind step_kind_of(const ReplaySession* session);

}  // namespace flashps::engine
