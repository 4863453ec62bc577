#include "engine/replay_session.h"

#include "core/diagnostics/error.h"
#include "engine/planner.h"
#include "engine/template_mask.h"

namespace flashps::engine {
namespace {

Slot slot_of(CacheMode mode) { return mode == CacheMode::kv ? Slot::keys : Slot::hidden; }

// The mode an edit replays as: kv unless the request asks for hidden, or (automatic) the capture
// has no kv. Throws for kv on a model that cannot replay it.
CacheMode chosen_mode(const Capture& capture, const ReplaySettings& settings) {
  if (!settings.why_no_kv.empty()) return CacheMode::hidden;
  const bool has_kv = capture.contains({settings.end_step - 1, 0, Slot::keys});
  if (settings.requested == CacheMode::hidden || (settings.requested == CacheMode::automatic && !has_kv))
    return CacheMode::hidden;
  return CacheMode::kv;
}

// Counts `more` into `total`; the first error seen stays.
void add_replay_stats(ReplayStats& total, const ReplayStats& more) {
  total.blocks_from_cache += more.blocks_from_cache;
  total.blocks_computed += more.blocks_computed;
  total.entries_failed += more.entries_failed;
  total.bytes_loaded += more.bytes_loaded;
  total.load_wait_seconds += more.load_wait_seconds;
  total.load_seconds += more.load_seconds;
  total.reads += more.reads;
  total.entries_in_place += more.entries_in_place;
  total.bytes_in_place += more.bytes_in_place;
  if (total.first_error.empty()) total.first_error = more.first_error;
}

// Refuses what no capture could serve; false for a request that computes in full anyway.
bool wants_replay(const TokenMask& mask, const ReplaySettings& settings) {
  if (settings.requested == CacheMode::kv && !settings.why_no_kv.empty()) throw UnsupportedError(settings.why_no_kv);
  return settings.requested != CacheMode::full && !mask.empty() && !mask.full();
}

}  // namespace

std::unique_ptr<ReplaySession> ReplaySession::attach(CaptureStore& store, const CaptureId& id, TokenMask& mask,
                                                     const ReplaySettings& settings, const DescribeBlocks& describe,
                                                     std::vector<std::string>& notes) {
  if (!wants_replay(mask, settings)) return nullptr;
  std::shared_ptr<const Capture> capture = store.find(id);
  if (!capture) {
    notes.push_back("template not registered for these settings: computed in full");
    return nullptr;
  }
  const CacheMode mode = chosen_mode(*capture, settings);
  if (!capture->contains({settings.end_step - 1, 0, slot_of(mode)})) {
    notes.push_back(std::string("template capture has no '") + cache_mode_name(mode) +
                    "' activations: computed in full");
    return nullptr;
  }
  // Tokens the template run regenerated hold no reusable activations: computed as well.
  std::optional<TokenMask> compute_mask = replay_compute_mask_noted(*capture, mask, settings.token_unit, notes);
  if (!compute_mask) return nullptr;
  if (compute_mask->masked_count() > mask.masked_count()) mask = std::move(*compute_mask);

  const ReplayBlocks blocks = describe(mask);
  if (blocks.work.size() != blocks.counts.size() ||
      (!blocks.block_masks.empty() && blocks.block_masks.size() != blocks.work.size()))
    throw Error("replay: a model's block description needs one token count (and mask) per block");
  if (mode == CacheMode::kv && !blocks.block_masks.empty())
    throw Error("replay: kv replay needs one token grid for every block");

  std::unique_ptr<ReplaySession> session(new ReplaySession());
  session->mode_ = mode;
  session->use_cache_.assign(blocks.work.size(), true);
  // kv replay cannot skip a block's load (the stream carries masked tokens only); hidden can.
  if (mode == CacheMode::hidden && settings.use_planner) {
    DeviceSpeed speed = settings.speed;
    if (capture->expected_load_bytes_per_second() > 0)
      speed.load_bytes_per_second = capture->expected_load_bytes_per_second();  // host or disk tier
    session->use_cache_ =
        plan_pipeline(estimate_block_times(blocks.work, blocks.counts, mode, speed), loader_model(mode)).use_cache;
  }
  session->compute_saving_ = forward_flops(blocks.work, blocks.counts) / forward_flops(blocks.work, blocks.counts, mode);
  session->flops_per_step_ = planned_flops(blocks.work, blocks.counts, mode, session->use_cache_);
  session->capture_ = std::move(capture);
  session->mask_ = mask;
  session->block_masks_ = blocks.block_masks;
  session->end_step_ = settings.end_step;
  session->device_ = settings.device;
  session->start_router(settings.first_step);
  return session;
}

bool ReplaySession::would_replay(CaptureStore& store, const CaptureId& id, const TokenMask& mask,
                                 const ReplaySettings& settings) {
  if (!wants_replay(mask, settings)) return false;
  const std::shared_ptr<const Capture> capture = store.find(id);
  if (!capture || !capture->contains({settings.end_step - 1, 0, slot_of(chosen_mode(*capture, settings))}))
    return false;
  std::vector<std::string> ignored;
  return replay_compute_mask_noted(*capture, mask, settings.token_unit, ignored).has_value();
}

void ReplaySession::start_router(int first_step) {
  std::vector<int> steps;
  for (int step = first_step; step < end_step_; ++step) steps.push_back(step);
  router_ = block_masks_.empty()
                ? std::make_unique<ReplayRouter>(capture_, mask_, mode_, use_cache_, steps, device_)
                : std::make_unique<ReplayRouter>(capture_, block_masks_, use_cache_, steps, device_);
}

void ReplaySession::restart_at(int step) {
  add_replay_stats(earlier_, router_->stats());
  start_router(step);
}

ReplayStats ReplaySession::stats() {
  ReplayStats total = router_->stats();
  add_replay_stats(total, earlier_);
  return total;
}

std::string ReplaySession::failed_entries_note() {
  const ReplayStats total = stats();
  if (!total.entries_failed) return {};
  return std::to_string(total.entries_failed) + " cached entries were unreadable and computed instead (" +
         total.first_error + ")";
}

void call_with_replay_recovery(size_t members, const std::function<ReplaySession*(size_t)>& session_of,
                               const std::function<int(size_t)>& current_step_of,
                               const std::function<void()>& call,
                               const std::function<void(size_t, const std::string&)>& compute_in_full) {
  // Each retry drops at least one member's replay, so a batch settles within members + 1 calls.
  for (size_t attempt = 0;; ++attempt) {
    try {
      call();
      return;
    } catch (const ReplayUnavailable& error) {
      if (attempt > members) throw;
      for (size_t member = 0; member < members; ++member) {
        ReplaySession* session = session_of(member);
        if (!session) continue;
        if (session->unavailable())
          compute_in_full(member, error.what());
        else
          session->restart_at(current_step_of(member));
      }
    }
  }
}

StepKind step_kind_of(const ReplaySession* session) {
  if (!session) return StepKind::full;
  return session->mode() == CacheMode::kv ? StepKind::kv : StepKind::hidden;
}

}  // namespace flashps::engine
