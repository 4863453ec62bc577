// The engine's replay session: the one place an edit's replay is attached (lookup, the mode's
// activations, the template's own mask, the plan) and recovered when an entry proves unreadable.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>

#include "core/diagnostics/error.h"
#include "engine/replay_session.h"
#include "engine/template_mask.h"

using namespace flashps;
using namespace flashps::engine;

namespace {

constexpr int kSteps = 2;

TokenMask grid_mask(std::initializer_list<int> masked_tokens) {
  at::Tensor grid = at::zeros({3, 4}, at::kBool);
  for (int token : masked_tokens) grid.view({-1})[token] = true;
  return token_mask_from_grid(grid);
}

// A one-block kv + hidden capture of a 3x4-token template; `missing_keys_at` drops that step's keys.
void register_template(CaptureStore& store, const CaptureId& id, const TokenMask& template_mask,
                       int missing_keys_at = -1) {
  auto writer = store.begin(id);
  for (int step = 0; step < kSteps; ++step) {
    if (step != missing_keys_at) writer->put({step, 0, Slot::keys}, at::ones({12, 4}));
    writer->put({step, 0, Slot::values}, at::ones({12, 4}));
    writer->put({step, 0, Slot::hidden}, at::ones({12, 4}));
    writer->put({step, kOutputBlock, Slot::output}, at::ones({12, 4}));
  }
  put_template_mask(*writer, template_mask);
  writer->commit();
}

ReplaySettings settings_for(CacheMode requested) {
  ReplaySettings settings;
  settings.requested = requested;
  settings.first_step = 0;
  settings.end_step = kSteps;
  return settings;
}

ReplayBlocks one_block(const TokenMask& mask) {
  BlockWork work;
  work.flops_per_query_row = 1e6;
  work.flops_per_key_row = 1e5;
  work.cached_bytes_per_row_kv = work.cached_bytes_per_row_hidden = 16;
  return {{work}, {{0, mask.token_count(), mask.masked_count()}}, {}};
}

}  // namespace

TEST_CASE("a replay session attaches only when the store holds what the edit needs", "[engine][replay]") {
  MemoryCaptureStore store;
  const CaptureId id{"template", "model", "config"};
  std::vector<std::string> notes;

  TokenMask mask = grid_mask({6, 7});
  CHECK_FALSE(ReplaySession::attach(store, id, mask, settings_for(CacheMode::automatic), one_block, notes));
  CHECK(notes == std::vector<std::string>{"template not registered for these settings: computed in full"});
  CHECK_FALSE(ReplaySession::would_replay(store, id, mask, settings_for(CacheMode::automatic)));

  register_template(store, id, grid_mask({}));
  notes.clear();
  auto session = ReplaySession::attach(store, id, mask, settings_for(CacheMode::automatic), one_block, notes);
  REQUIRE(session);
  CHECK(notes.empty());
  CHECK(session->mode() == CacheMode::kv);  // automatic prefers kv when it was captured
  CHECK(session->compute_saving() > 1.0);
  CHECK(ReplaySession::would_replay(store, id, mask, settings_for(CacheMode::automatic)));

  // Nothing to replay for a full request or a mask covering every token: no session, no note.
  notes.clear();
  CHECK_FALSE(ReplaySession::attach(store, id, mask, settings_for(CacheMode::full), one_block, notes));
  TokenMask everything = grid_mask({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  CHECK_FALSE(ReplaySession::attach(store, id, everything, settings_for(CacheMode::hidden), one_block, notes));
  CHECK(notes.empty());

  // A model that cannot replay kv refuses a kv request with its reason, and replays hidden otherwise.
  ReplaySettings unet = settings_for(CacheMode::kv);
  unet.why_no_kv = "kv does not apply to this model";
  CHECK_THROWS_AS(ReplaySession::attach(store, id, mask, unet, one_block, notes), UnsupportedError);
  CHECK_THROWS_WITH(ReplaySession::would_replay(store, id, mask, unet), "kv does not apply to this model");
  unet.requested = CacheMode::automatic;
  auto hidden = ReplaySession::attach(store, id, mask, unet, one_block, notes);
  REQUIRE(hidden);
  CHECK(hidden->mode() == CacheMode::hidden);
}

TEST_CASE("a replay session widens the edit's mask to the template's own", "[engine][replay]") {
  MemoryCaptureStore store;
  const CaptureId id{"masked template", "model", "config"};
  register_template(store, id, grid_mask({1, 2}));
  std::vector<std::string> notes;
  TokenMask mask = grid_mask({6, 7});
  int64_t described_masked = -1;
  const auto describe = [&](const TokenMask& final_mask) {
    described_masked = final_mask.masked_count();
    return one_block(final_mask);
  };
  auto session = ReplaySession::attach(store, id, mask, settings_for(CacheMode::hidden), describe, notes);
  REQUIRE(session);
  CHECK(mask.masked_rows.equal(at::tensor({1, 2, 6, 7}, at::kLong)));
  CHECK(described_masked == 4);  // the family describes its blocks for the widened mask
  REQUIRE(notes.size() == 1);
  CHECK_THAT(notes[0], Catch::Contains("its 2 tokens outside this edit's mask are computed too"));
}

TEST_CASE("an unreadable kv entry drops only its own edit's replay; batch-mates restart", "[engine][replay]") {
  MemoryCaptureStore store;
  const CaptureId good_id{"good", "model", "config"}, broken_id{"broken", "model", "config"};
  register_template(store, good_id, grid_mask({}));
  register_template(store, broken_id, grid_mask({}), /*missing_keys_at=*/0);
  std::vector<std::string> notes;
  TokenMask good_mask = grid_mask({6, 7}), broken_mask = grid_mask({6, 7});
  std::vector<std::unique_ptr<ReplaySession>> sessions;
  sessions.push_back(ReplaySession::attach(store, good_id, good_mask, settings_for(CacheMode::kv), one_block, notes));
  sessions.push_back(
      ReplaySession::attach(store, broken_id, broken_mask, settings_for(CacheMode::kv), one_block, notes));
  REQUIRE(sessions[0]);
  REQUIRE(sessions[1]);

  int calls = 0;
  std::vector<std::pair<size_t, std::string>> computed_in_full;
  const auto call = [&] {  // one step of one block for the batch, the way a model drives its routers
    ++calls;
    for (auto& session : sessions) {
      if (!session) continue;
      session->router().set_step(0);
      session->router().before_block(0);
      session->router().finish_output(at::zeros({2, 4}));
    }
  };
  call_with_replay_recovery(
      sessions.size(), [&](size_t i) { return sessions[i].get(); }, [](size_t) { return 0; }, call,
      [&](size_t i, const std::string& why) {
        computed_in_full.emplace_back(i, why);
        sessions[i].reset();
      });
  CHECK(calls == 2);
  REQUIRE(computed_in_full.size() == 1);
  CHECK(computed_in_full[0].first == 1);
  CHECK_THAT(computed_in_full[0].second, Catch::Contains("cached keys/values unreadable"));
  // The batch-mate read its block in the stopped call and again after restarting: both count.
  REQUIRE(sessions[0]);
  CHECK(sessions[0]->stats().blocks_from_cache == 2);
  CHECK(sessions[0]->failed_entries_note().empty());
}
