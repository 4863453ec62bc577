// A capture keeps the token mask its template run used, and replaying it computes the union of
// that mask and the edit's: the template's regenerated tokens are not reused.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>

#include "core/diagnostics/error.h"
#include "engine/capture.h"
#include "engine/template_mask.h"

using namespace flashps;
using namespace flashps::engine;

namespace {
TokenMask grid_mask(std::initializer_list<int> masked_tokens) {
  at::Tensor grid = at::zeros({3, 4}, at::kBool);
  for (int token : masked_tokens) grid.view({-1})[token] = true;
  return token_mask_from_grid(grid);
}
}  // namespace

TEST_CASE("uniting token masks marks tokens masked in either", "[token_mask]") {
  TokenMask united = unite_token_masks(grid_mask({0, 5}), grid_mask({5, 11}));
  CHECK(united.masked_rows.equal(at::tensor({0, 5, 11}, at::kLong)));
  CHECK(united.unmasked_rows.numel() == 9);
  CHECK_THROWS_WITH(unite_token_masks(grid_mask({0}), token_mask_from_grid(at::zeros({4, 3}, at::kBool))),
                    Catch::Contains("different grids"));
}

TEST_CASE("a capture keeps its template's mask, and replays compute the union", "[engine][token_mask]") {
  MemoryCaptureStore store;
  const TokenMask template_tokens = grid_mask({1, 2, 6});
  {
    auto writer = store.begin({"masked", "model", "config"});
    writer->put({0, 0, Slot::hidden}, at::ones({12, 4}));
    put_template_mask(*writer, template_tokens);
    writer->commit();
  }
  auto masked = store.find({"masked", "model", "config"});
  REQUIRE(masked);
  CHECK(template_mask(*masked, 3, 4).masked.equal(template_tokens.masked));
  const TokenMask compute = replay_compute_mask(*masked, grid_mask({6, 7}));
  CHECK(compute.masked_rows.equal(at::tensor({1, 2, 6, 7}, at::kLong)));

  // A template run without a mask stores nothing: edits compute only their own tokens.
  {
    auto writer = store.begin({"whole", "model", "config"});
    writer->put({0, 0, Slot::hidden}, at::ones({12, 4}));
    put_template_mask(*writer, grid_mask({}));
    writer->commit();
  }
  auto whole = store.find({"whole", "model", "config"});
  REQUIRE(whole);
  CHECK_FALSE(whole->contains({0, kTemplateMaskBlock, Slot::output}));
  CHECK(replay_compute_mask(*whole, grid_mask({6, 7})).masked_rows.equal(at::tensor({6, 7}, at::kLong)));
}
