// flashps/store.h on a damaged store: flashps_store_open recovers and says how in
// flashps_store_notes; an intact store has no notes and is not read-only.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "api/api_test_support.h"
#include "cache/activation_store.h"
#include "flashps/flashps.h"
#include "support/store_test_support.h"
#include "support/temp_dir.h"

using namespace flashps::test::api;

TEST_CASE("store: an unreadable index is set aside on open and the notes say so", "[api][store]") {
  flashps::test::TempDir dir;
  const std::string directory = dir.file("store");
  {
    StorePtr intact = open_store(directory);
    CHECK(std::string(flashps_store_notes(intact.get())).empty());
    CHECK(flashps_store_is_read_only(intact.get()) == 0);
    flashps::cache::ActivationStoreOptions options;
    options.directory = directory;
    flashps::test::write_capture(*flashps::cache::ActivationStore::open(options), 1);
  }
  std::ofstream(directory + "/index.sqlite", std::ios::binary | std::ios::trunc) << std::string(6000, '!');
  StorePtr store = open_store(directory);
  const std::string notes = flashps_store_notes(store.get());
  CHECK_THAT(notes, Catch::Contains("index.sqlite was unreadable (not an SQLite database): moved to"));
  CHECK_THAT(notes, Catch::Contains("1 segment file(s)"));
  CHECK(flashps_store_is_read_only(store.get()) == 0);
  flashps_store_stats stats{};
  stats.struct_size = sizeof(stats);
  REQUIRE(flashps_store_get_stats(store.get(), &stats) == FLASHPS_OK);
  CHECK(stats.captures == 0);
  CHECK(flashps_store_notes(nullptr) == nullptr);
  CHECK(flashps_store_is_read_only(nullptr) == 0);
}
