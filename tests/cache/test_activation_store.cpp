// The SQLite-indexed activation store: round trips, partial reads, duplicates, corruption,
// quotas, LRU and pinning, recovery, prefetch.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cache/activation_store.h"
#include "cache/host_tier.h"
#include "cache/sqlite_db.h"
#include "core/diagnostics/error.h"
#include "support/temp_dir.h"
#include "support/store_test_support.h"

using namespace flashps;
using namespace flashps::cache;
using flashps::test::capture_intact;
using flashps::test::capture_name;
using flashps::test::pattern_rows;
using flashps::test::write_capture;

namespace {

std::shared_ptr<ActivationStore> open_store(const test::TempDir& dir, int64_t quota = 0, int64_t host = 1 << 20) {
  ActivationStoreOptions options;
  options.directory = dir.file("store");
  options.disk_quota_bytes = quota;
  options.host_capacity_bytes = host;
  return ActivationStore::open(options);
}

std::string only_segment(const test::TempDir& dir) {
  for (const auto& file : std::filesystem::directory_iterator(dir.file("store") + "/segments"))
    return file.path().string();
  return "";
}

}  // namespace

TEST_CASE("store round-trips captures across reopening and reads only the rows asked for", "[cache]") {
  test::TempDir dir;
  {
    auto store = open_store(dir);
    write_capture(*store, 1);
    auto writer = store->begin(capture_name(2));
    at::Tensor bf16 = pattern_rows(10, 8, 5).to(at::kBFloat16);
    writer->put({0, 0, engine::Slot::keys}, bf16);
    writer->commit();
  }
  auto store = open_store(dir);
  CHECK(store->list().size() == 2);
  CHECK(capture_intact(*store, 1));
  auto capture = store->find(capture_name(2));
  REQUIRE(capture);
  CHECK(capture->contains({0, 0, engine::Slot::keys}));
  CHECK_FALSE(capture->contains({0, 0, engine::Slot::values}));
  at::Tensor rows = capture->read_rows({0, 0, engine::Slot::keys}, at::tensor({1, 2, 7}, at::kLong));
  CHECK(rows.scalar_type() == at::kBFloat16);
  CHECK(at::equal(rows, pattern_rows(10, 8, 5).to(at::kBFloat16).index_select(0, at::tensor({1, 2, 7}, at::kLong))));
  CHECK_FALSE(store->find(capture_name(3)));

  // Partial reads: 20% of the rows move 20% of the bytes.
  auto first = store->find(capture_name(1));
  const int64_t before = store->stats().bytes_read_from_disk;
  at::Tensor some = at::arange(0, 64, 5);  // 13 of 64 rows
  first->read_rows({1, 2, engine::Slot::hidden}, some);
  CHECK(store->stats().bytes_read_from_disk - before == some.numel() * 32 * 4);
}

TEST_CASE("committing the same capture twice keeps one", "[cache]") {
  test::TempDir dir;
  auto store = open_store(dir);
  auto first = store->begin(capture_name(1));
  auto second = store->begin(capture_name(1));
  first->put({0, 0, engine::Slot::hidden}, pattern_rows(4, 4, 1));
  second->put({0, 0, engine::Slot::hidden}, pattern_rows(4, 4, 1));
  first->commit();
  CHECK(second->commit() != nullptr);
  CHECK(store->list().size() == 1);
  second.reset();
  CHECK(store->stats().segment_files == 1);
}

TEST_CASE("a corrupted entry is detected, quarantined and reported as missing", "[cache]") {
  test::TempDir dir;
  {
    auto store = open_store(dir);
    write_capture(*store, 1, 1, 2);
  }
  {
    std::fstream segment(only_segment(dir), std::ios::in | std::ios::out | std::ios::binary);
    segment.seekp(64 * 32 * 4 + 100);  // inside the second entry
    segment.put('\x5a');
  }
  auto store = open_store(dir);
  auto capture = store->find(capture_name(1));
  REQUIRE(capture);
  CHECK_NOTHROW(capture->read_rows({0, 0, engine::Slot::hidden}, at::arange(64)));
  CHECK_THROWS_WITH(capture->read_rows({0, 1, engine::Slot::hidden}, at::arange(64)), Catch::Contains("checksum"));
  CHECK(store->list()[0].quarantined == 1);
  CHECK_FALSE(store->find(capture_name(1))->contains({0, 1, engine::Slot::hidden}));
  CHECK(store->verify().damaged == 0);  // already quarantined, nothing new
}

TEST_CASE("verify finds damage that no read has touched yet", "[cache]") {
  test::TempDir dir;
  {
    auto store = open_store(dir);
    write_capture(*store, 1, 1, 2);
  }
  {
    std::fstream segment(only_segment(dir), std::ios::in | std::ios::out | std::ios::binary);
    segment.seekp(10);
    segment.put('\x01');
  }
  auto store = open_store(dir);
  VerifyReport report = store->verify();
  CHECK(report.entries_checked == 2);
  CHECK(report.damaged == 1);
}

TEST_CASE("the disk quota evicts least recently used captures, never pinned ones", "[cache]") {
  test::TempDir dir;
  const int64_t capture_bytes = 2 * 3 * 64 * 32 * 4;
  auto store = open_store(dir, capture_bytes * 2 + 100);
  write_capture(*store, 1);
  write_capture(*store, 2);
  {
    auto held = store->find(capture_name(1));  // 1 is now the most recently used, and pinned
    write_capture(*store, 3);                  // over quota: 2 goes
    CHECK(store->find(capture_name(1)));
    CHECK_FALSE(store->find(capture_name(2)));
    CHECK(store->find(capture_name(3)));
  }
  // A capture larger than the whole quota is refused, and the store is unchanged.
  auto tiny = open_store(dir, 1000);
  CHECK_THROWS_WITH(write_capture(*tiny, 9), Catch::Contains("quota"));
  CHECK(tiny->stats().segment_files == static_cast<int64_t>(tiny->list().size()));
}

TEST_CASE("the host tier is LRU by bytes and keeps pinned captures", "[cache]") {
  HostTier tier(3000);
  auto block = [] { return at::zeros({250}); };  // 1000 bytes
  CHECK(tier.put({1, {0, 0, engine::Slot::hidden}}, block()));
  CHECK(tier.put({2, {0, 0, engine::Slot::hidden}}, block()));
  CHECK(tier.put({3, {0, 0, engine::Slot::hidden}}, block()));
  tier.pin(1);
  CHECK(tier.put({4, {0, 0, engine::Slot::hidden}}, block()));  // evicts 2, the oldest unpinned
  CHECK(tier.contains({1, {0, 0, engine::Slot::hidden}}));
  CHECK_FALSE(tier.contains({2, {0, 0, engine::Slot::hidden}}));
  CHECK(tier.get({3, {0, 0, engine::Slot::hidden}}).defined());  // 3 now most recent
  CHECK(tier.put({5, {0, 0, engine::Slot::hidden}}, block()));    // evicts 4
  CHECK_FALSE(tier.contains({4, {0, 0, engine::Slot::hidden}}));
  CHECK(tier.bytes() == 3000);
  CHECK_FALSE(tier.put({6, {0, 0, engine::Slot::hidden}}, at::zeros({1000})));  // larger than capacity
}

TEST_CASE("opening the store removes orphan segments and rows whose bytes are gone", "[cache]") {
  test::TempDir dir;
  {
    auto store = open_store(dir);
    write_capture(*store, 1);
    write_capture(*store, 2);
  }
  const auto captures = open_store(dir)->list();
  std::ofstream(dir.file("store") + "/segments/deadbeef00000000.seg") << "half a capture";
  std::filesystem::resize_file(dir.file("store") + "/segments/" + captures[0].segment, 100);
  auto store = open_store(dir);
  CHECK(store->open_report().removed_segments == 1);
  CHECK(store->open_report().removed_captures == 1);
  CHECK(store->list().size() == 1);
  CHECK(store->stats().segment_files == 1);
}

TEST_CASE("prefetch loads a capture into the host tier and reads then hit memory", "[cache]") {
  test::TempDir dir;
  auto store = open_store(dir);
  write_capture(*store, 1);
  store->prefetch(capture_name(1));
  store->wait_for_prefetches();
  CHECK(store->stats().host_bytes == 2 * 3 * 64 * 32 * 4);
  const int64_t disk_before = store->stats().bytes_read_from_disk;
  CHECK(capture_intact(*store, 1));
  CHECK(store->stats().bytes_read_from_disk == disk_before);
  CHECK(store->stats().host_hits >= 6);
}

TEST_CASE("a capture shares an entry in place only while it is in the host tier", "[cache]") {
  test::TempDir dir;
  auto store = open_store(dir);
  write_capture(*store, 1);
  const engine::EntryKey key{1, 2, engine::Slot::hidden};
  {
    auto capture = store->find(capture_name(1));
    REQUIRE(capture);
    const int64_t misses = store->stats().host_misses;
    if (store->stats().host_bytes == 0) {  // nothing resident yet: no in-place view, no miss counted
      CHECK_FALSE(capture->resident_entry(key).defined());
      CHECK(store->stats().host_misses == misses);
    }
  }
  store->prefetch(capture_name(1));
  store->wait_for_prefetches();
  auto capture = store->find(capture_name(1));
  const int64_t hits = store->stats().host_hits;
  const at::Tensor whole = capture->resident_entry(key);
  REQUIRE(whole.defined());
  CHECK(store->stats().host_hits == hits + 1);
  CHECK(whole.sizes() == at::IntArrayRef({64, 32}));
  CHECK(at::equal(whole, capture->read_rows(key, at::arange(64))));
  CHECK_FALSE(capture->resident_entry({9, 9, engine::Slot::hidden}).defined());
}

TEST_CASE("a newer schema version is refused with a clear error", "[cache]") {
  test::TempDir dir;
  open_store(dir);
  {
    cache::ActivationStoreOptions options;
    auto db = std::make_unique<SqliteDb>(dir.file("store") + "/index.sqlite");
    db->execute("UPDATE schema_version SET version = 99");
  }
  CHECK_THROWS_WITH(open_store(dir), Catch::Contains("schema version 99"));
}

TEST_CASE("load-time estimates follow the tier the entries are in", "[cache]") {
  test::TempDir dir;
  auto store = open_store(dir);
  write_capture(*store, 1);
  const double from_disk = store->find(capture_name(1))->expected_load_bytes_per_second();
  store->prefetch(capture_name(1));
  store->wait_for_prefetches();
  const double from_host = store->find(capture_name(1))->expected_load_bytes_per_second();
  CHECK(from_disk > 0);
  CHECK(from_host > from_disk);
}

TEST_CASE("threads of one process share a store safely", "[cache]") {
  test::TempDir dir;
  auto store = open_store(dir, 0, 1 << 18);  // a small host tier: prefetches evict each other
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        write_capture(*store, t * 10 + i % 3);  // repeats: duplicate commits race too
        store->prefetch(capture_name(t * 10));
        for (int other = 0; other < 4; ++other)
          if (store->find(capture_name(other * 10)) && !capture_intact(*store, other * 10)) ++failures;
      }
    });
  for (auto& thread : threads) thread.join();
  store->wait_for_prefetches();
  CHECK(failures == 0);
  CHECK(store->list().size() == 12);
  CHECK(store->verify().damaged == 0);
}

TEST_CASE("the verify policy decides which reads are checked", "[cache]") {
  for (VerifyPolicy policy : {VerifyPolicy::always, VerifyPolicy::sampled, VerifyPolicy::never}) {
    test::TempDir dir;
    ActivationStoreOptions options;
    options.directory = dir.file("store");
    options.verify = policy;
    options.sample_every = 4;
    {
      auto store = ActivationStore::open(options);
      write_capture(*store, 1, 1, 1);
    }
    {
      std::fstream segment(only_segment(dir), std::ios::in | std::ios::out | std::ios::binary);
      segment.seekp(0);
      segment.put('\x42');
    }
    auto store = ActivationStore::open(options);
    auto capture = store->find(capture_name(1));
    int detected = 0;
    for (int read = 0; read < 8; ++read) {
      try {
        capture->read_rows({0, 0, engine::Slot::hidden}, at::arange(64));
      } catch (const Error&) {
        ++detected;
        break;  // quarantined from here on
      }
    }
    if (policy == VerifyPolicy::never) CHECK(detected == 0);
    else CHECK(detected == 1);
  }
  CHECK_THROWS_WITH(verify_policy_from_name("sometimes"), Catch::Contains("always, sampled, never"));
}
