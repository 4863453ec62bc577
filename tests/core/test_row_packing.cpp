#include <ATen/ATen.h>

#include <catch2/catch.hpp>

#include "core/diagnostics/error.h"
#include "core/kernels/row_packing.h"

using namespace flashps;

TEST_CASE("row packing equals index_select and cat, at any column", "[kernels]") {
  auto generator = at::detail::createCPUGenerator(7);
  // Unequal requests, one taking every row, one an empty selection, enough rows to split over threads.
  at::Tensor first = at::randn({300, 4}, generator), second = at::randn({50, 4}, generator),
             third = at::randn({9, 4}, generator);
  at::Tensor second_rows = at::tensor(std::vector<int64_t>{49, 0, 7, 7, 31}, at::kLong);
  at::Tensor none = at::empty({0}, at::kLong);
  at::Tensor packed = at::full({305, 6}, -1.0f);
  pack_rows(packed, 2, {{first, {}, 0}, {second, second_rows, 300}, {third, none, 305}});
  at::Tensor expected = at::cat({first, second.index_select(0, second_rows)});
  CHECK(at::equal(packed.narrow(1, 2, 4), expected));
  CHECK(at::equal(packed.narrow(1, 0, 2), at::full({305, 2}, -1.0f)));  // other columns untouched

  // A column slice of a wider source is read in place.
  at::Tensor wide = at::randn({10, 8}, generator);
  at::Tensor narrow_packed = at::zeros({10, 3});
  pack_rows(narrow_packed, 0, {{wide.narrow(1, 5, 3), {}, 0}});
  CHECK(at::equal(narrow_packed, wide.narrow(1, 5, 3)));
}

TEST_CASE("row packing refuses rows or columns that do not fit", "[kernels]") {
  at::Tensor source = at::ones({4, 3});
  at::Tensor packed = at::zeros({4, 5});
  const at::Tensor before = packed.clone();
  CHECK_THROWS_AS(pack_rows(packed, 3, {{source, {}, 0}}), Error);                      // columns 3..6 of 5
  CHECK_THROWS_AS(pack_rows(packed, 0, {{source, {}, 1}}), Error);                      // rows 1..5 of 4
  CHECK_THROWS_AS(pack_rows(packed, 0, {{source, at::tensor(std::vector<int64_t>{0, 4}), 0}}), Error);
  CHECK_THROWS_AS(pack_rows(packed, 0, {{source, at::tensor(std::vector<int64_t>{-1}), 0}}), Error);
  CHECK_THROWS_AS(pack_rows(packed, 0, {{source.to(at::kDouble), {}, 0}}), Error);
  CHECK(at::equal(packed, before));  // nothing written before the error
}
