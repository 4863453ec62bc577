#include <catch2/catch.hpp>

#include "core/diagnostics/error.h"
#include "serve/batching.h"

using namespace flashps::serve;

namespace {

RequestWork work(int steps, int64_t masked = 10) {
  RequestWork w;
  w.steps = steps;
  w.image_tokens = 100;
  w.masked_tokens = masked;
  w.text_tokens = 4;
  w.cached = true;
  return w;
}

}  // namespace

TEST_CASE("continuous batching admits ready requests at step boundaries up to the batch size", "[serve][batching]") {
  WorkerBatcher batcher(batching_config("cb", 2));
  CHECK(batcher.next_action().kind == WorkerAction::idle);
  batcher.assign(1, work(3));
  batcher.assign(2, work(1));
  batcher.assign(3, work(2));
  CHECK(batcher.next_action().kind == WorkerAction::idle);  // nothing prepared yet
  batcher.mark_prepared(1, work(3));
  WorkerAction action = batcher.next_action();
  REQUIRE(action.kind == WorkerAction::step);
  CHECK(action.requests == std::vector<RequestId>{1});
  CHECK(batcher.step_done(action.requests).empty());
  batcher.mark_prepared(3, work(2));  // 3 is ready before 2: it joins first
  batcher.mark_prepared(2, work(1));
  action = batcher.next_action();
  CHECK(action.requests == std::vector<RequestId>{1, 2});  // arrival order among ready ones, batch of 2
  CHECK(batcher.step_done(action.requests) == std::vector<RequestId>{2});
  action = batcher.next_action();
  CHECK(action.requests == std::vector<RequestId>{1, 3});
  CHECK(batcher.step_done(action.requests) == std::vector<RequestId>{1});  // 1 ran 3 steps
  action = batcher.next_action();
  CHECK(action.requests == std::vector<RequestId>{3});
  CHECK(batcher.step_done(action.requests) == std::vector<RequestId>{3});
  CHECK(batcher.request_count() == 0);
  CHECK(batcher.next_action().kind == WorkerAction::idle);
}

TEST_CASE("static batching runs a batch to its end before admitting more", "[serve][batching]") {
  WorkerBatcher batcher(batching_config("static", 4));
  batcher.assign(1, work(2));
  batcher.mark_prepared(1, work(2));
  WorkerAction action = batcher.next_action();
  CHECK(action.requests == std::vector<RequestId>{1});
  batcher.step_done(action.requests);
  batcher.assign(2, work(1));
  batcher.mark_prepared(2, work(1));
  CHECK(batcher.next_action().requests == std::vector<RequestId>{1});  // 2 waits
  batcher.step_done({1});
  CHECK(batcher.next_action().requests == std::vector<RequestId>{2});
}

TEST_CASE("inline (naive) workers prepare and finish requests between steps", "[serve][batching]") {
  WorkerBatcher batcher(batching_config("naive-cb", 2));
  batcher.assign(1, work(2));
  batcher.assign(2, work(1));
  batcher.assign(3, work(1));
  WorkerAction action = batcher.next_action();
  REQUIRE(action.kind == WorkerAction::prepare);
  CHECK(action.requests == std::vector<RequestId>{1});
  batcher.mark_prepared(1, work(2));
  action = batcher.next_action();
  REQUIRE(action.kind == WorkerAction::prepare);  // a slot is free: prepare before stepping
  CHECK(action.requests == std::vector<RequestId>{2});
  batcher.mark_prepared(2, work(1));
  action = batcher.next_action();
  REQUIRE(action.kind == WorkerAction::step);  // batch full: 3 waits unprepared
  CHECK(action.requests == std::vector<RequestId>{1, 2});
  CHECK(batcher.step_done(action.requests) == std::vector<RequestId>{2});
  action = batcher.next_action();
  REQUIRE(action.kind == WorkerAction::finish);
  CHECK(action.requests == std::vector<RequestId>{2});
  batcher.mark_finished(2);
  CHECK(batcher.next_action().kind == WorkerAction::prepare);
}

TEST_CASE("static-full inline batching prepares the whole batch, then steps it", "[serve][batching]") {
  BatchingConfig config = batching_config("static-full", 2);
  CHECK_FALSE(config.mask_aware);
  WorkerBatcher batcher(config);
  batcher.assign(1, work(1));
  batcher.assign(2, work(1));
  batcher.assign(3, work(1));
  CHECK(batcher.next_action().requests == std::vector<RequestId>{1});
  batcher.mark_prepared(1, work(1));
  CHECK(batcher.next_action().requests == std::vector<RequestId>{2});
  batcher.mark_prepared(2, work(1));
  WorkerAction action = batcher.next_action();
  CHECK(action.kind == WorkerAction::step);
  CHECK(action.requests == std::vector<RequestId>{1, 2});
}

TEST_CASE("removed requests leave every queue; unknown names are errors", "[serve][batching]") {
  WorkerBatcher batcher(batching_config("cb", 4));
  batcher.assign(1, work(5, 40));
  batcher.assign(2, work(5, 20));
  batcher.mark_prepared(1, work(5, 40));
  batcher.mark_prepared(2, work(5, 20));
  batcher.step_done(batcher.next_action().requests);
  CHECK(batcher.computed_token_count() == 60);
  const auto outstanding = batcher.outstanding();
  REQUIRE(outstanding.size() == 2);
  CHECK(outstanding[0].steps == 4);  // remaining steps
  CHECK(batcher.remove(1));
  CHECK_FALSE(batcher.remove(1));
  CHECK(batcher.next_action().requests == std::vector<RequestId>{2});
  CHECK_THROWS_AS(batcher.assign(2, work(1)), flashps::Error);
  CHECK_THROWS_WITH(batching_config("dynamic", 4), Catch::Contains("static-full, static, naive-cb, cb"));
}
