#include <ATen/ATen.h>

#include <catch2/catch.hpp>

#include "core/diagnostics/error.h"
#include "engine/token_mask.h"

using namespace flashps;
using namespace flashps::engine;

TEST_CASE("a token is masked if any of its pixels is", "[token_mask]") {
  at::Tensor pixels = at::zeros({32, 48});
  pixels[0][0] = 1.0;    // token (0, 0)
  pixels[17][47] = 1.0;  // token (1, 2)
  TokenMask mask = token_mask_from_pixels(pixels, 16);
  CHECK(mask.grid_height == 2);
  CHECK(mask.grid_width == 3);
  CHECK(mask.masked_count() == 2);
  CHECK(mask.masked_rows[0].item<int64_t>() == 0);
  CHECK(mask.masked_rows[1].item<int64_t>() == 5);
  CHECK(mask.unmasked_rows.numel() == 4);
  CHECK(mask.ratio() == Approx(2.0 / 6.0));
}

TEST_CASE("token mask dilation grows the masked region by k tokens", "[token_mask]") {
  at::Tensor pixels = at::zeros({80, 80});
  pixels.slice(0, 32, 48).slice(1, 32, 48).fill_(1.0);  // the centre token of a 5x5 grid
  CHECK(token_mask_from_pixels(pixels, 16, 0).masked_count() == 1);
  CHECK(token_mask_from_pixels(pixels, 16, 1).masked_count() == 9);
  CHECK(token_mask_from_pixels(pixels, 16, 2).masked_count() == 25);
}

TEST_CASE("token mask rejects sizes that are not whole tokens", "[token_mask]") {
  CHECK_THROWS_AS(token_mask_from_pixels(at::zeros({30, 32}), 16), Error);
  CHECK(token_mask_from_pixels(at::zeros({32, 32}), 16).empty());
  CHECK(token_mask_from_pixels(at::ones({32, 32}), 16).full());
}

TEST_CASE("halving a token mask max-pools 2x2 tokens, odd sides rounding up", "[token_mask]") {
  at::Tensor grid = at::zeros({5, 5}, at::kBool);
  grid[4][4] = true;
  grid[0][1] = true;
  const TokenMask half = halve_token_mask(token_mask_from_grid(grid));
  CHECK(half.grid_height == 3);
  CHECK(half.grid_width == 3);
  // (0,1) -> (0,0); (4,4) -> (2,2)
  CHECK(half.masked_rows.equal(at::tensor(std::vector<int64_t>{0, 8})));
  const TokenMask quarter = halve_token_mask(half);
  CHECK(quarter.grid_height == 2);
  CHECK(quarter.masked_rows.equal(at::tensor(std::vector<int64_t>{0, 3})));
}

TEST_CASE("repeating a token mask for guidance copies offsets each copy's rows", "[token_mask]") {
  at::Tensor grid = at::zeros({2, 3}, at::kBool);
  grid[1][2] = true;
  const TokenMask repeated = repeat_token_mask(token_mask_from_grid(grid), 2);
  CHECK(repeated.token_count() == 12);
  CHECK(repeated.masked_rows.equal(at::tensor(std::vector<int64_t>{5, 11})));
  CHECK(repeated.unmasked_rows.numel() == 10);
  CHECK_THROWS_AS(repeat_token_mask(token_mask_from_grid(grid), 0), Error);
}
