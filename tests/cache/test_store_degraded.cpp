// A damaged or read-only activation store degrades instead of blocking: an unreadable index is
// set aside with every segment kept, a read-only store serves captures and refuses writes with
// the fix named, and nothing stored is lost. (A full disk needs a mounted file system: see
// tests/cli/cli_store_degraded.sh.)
#include <ATen/ATen.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "cache/activation_store.h"
#include "core/diagnostics/error.h"
#include "support/store_test_support.h"
#include "support/temp_dir.h"

using namespace flashps;
using namespace flashps::cache;
using flashps::test::capture_intact;
using flashps::test::capture_name;
using flashps::test::write_capture;
namespace fs = std::filesystem;

namespace {

std::shared_ptr<ActivationStore> open_store(const std::string& directory, bool read_only = false) {
  ActivationStoreOptions options;
  options.directory = directory;
  options.read_only = read_only;
  return ActivationStore::open(options);
}

std::string read_bytes(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

// Segment file name -> its bytes, for every *.seg under `folder`.
std::map<std::string, std::string> segments_in(const fs::path& folder) {
  std::map<std::string, std::string> segments;
  for (const auto& file : fs::directory_iterator(folder))
    if (file.path().extension() == ".seg") segments[file.path().filename().string()] = read_bytes(file.path());
  return segments;
}

std::vector<fs::path> entries_starting(const fs::path& folder, const std::string& prefix) {
  std::vector<fs::path> found;
  for (const auto& file : fs::directory_iterator(folder))
    if (file.path().filename().string().rfind(prefix, 0) == 0) found.push_back(file.path());
  return found;
}

std::string joined(const std::vector<std::string>& notes) {
  std::string text;
  for (const std::string& note : notes) text += note + "\n";
  return text;
}

// A store with captures 1 and 2, closed (its WAL checkpointed into index.sqlite).
std::string populated_store(const test::TempDir& dir) {
  const std::string directory = dir.file("store");
  auto store = open_store(directory);
  write_capture(*store, 1);
  write_capture(*store, 2);
  return directory;
}

}  // namespace

TEST_CASE("an index that is not a database is moved aside, its segments kept, an empty index started",
          "[cache][store]") {
  test::TempDir dir;
  const std::string directory = populated_store(dir);
  const auto segments_before = segments_in(fs::path(directory) / "segments");
  REQUIRE(segments_before.size() == 2);
  const std::string garbage(9000, 'x');
  std::ofstream(directory + "/index.sqlite", std::ios::binary | std::ios::trunc) << garbage;

  auto store = open_store(directory);
  CHECK(store->list().empty());
  CHECK_FALSE(store->read_only());
  CHECK(store->why_unwritable().empty());
  const std::string notes = joined(store->open_report().notes);
  CHECK_THAT(notes, Catch::Contains("index.sqlite was unreadable (not an SQLite database): moved to"));
  CHECK_THAT(notes, Catch::Contains("2 segment file(s)"));
  CHECK_THAT(notes, Catch::Contains("`rm -r "));
  CHECK_THAT(notes, Catch::Contains("`flashps template register`"));

  // Nothing lost: the damaged index byte for byte, every segment byte for byte.
  const auto corrupt = entries_starting(directory, "index.sqlite.corrupt-");
  REQUIRE(corrupt.size() == 1);
  CHECK(read_bytes(corrupt[0]) == garbage);
  const auto kept = entries_starting(directory, "unindexed-");
  REQUIRE(kept.size() == 1);
  CHECK(segments_in(kept[0]) == segments_before);
  CHECK(segments_in(fs::path(directory) / "segments").empty());

  // The new index works, and later opens (and gc) leave the kept files alone.
  write_capture(*store, 3);
  CHECK(capture_intact(*store, 3));
  store.reset();
  auto reopened = open_store(directory);
  CHECK(reopened->open_report().notes.empty());
  reopened->gc();
  CHECK(reopened->list().size() == 1);
  CHECK(segments_in(kept[0]) == segments_before);
  CHECK(read_bytes(corrupt[0]) == garbage);
}

TEST_CASE("an index with malformed pages is found while recovering and set aside the same way", "[cache][store]") {
  test::TempDir dir;
  const std::string directory = populated_store(dir);
  const std::string path = directory + "/index.sqlite";
  const std::string original = read_bytes(path);
  REQUIRE(original.size() > 8192);
  {
    // The header page stays valid (it opens); every table page after it is noise.
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(4096);
    const std::string noise(original.size() - 4096, '\x5a');
    file.write(noise.data(), static_cast<std::streamsize>(noise.size()));
  }
  auto store = open_store(directory);
  CHECK(store->list().empty());
  CHECK_THAT(joined(store->open_report().notes), Catch::Contains("unreadable (its pages are malformed)"));
  CHECK(entries_starting(directory, "index.sqlite.corrupt-").size() == 1);
  REQUIRE(entries_starting(directory, "unindexed-").size() == 1);
  CHECK(segments_in(entries_starting(directory, "unindexed-")[0]).size() == 2);
}

TEST_CASE("a read-only store serves its captures, refuses writes naming the fix, and changes nothing",
          "[cache][store]") {
  test::TempDir dir;
  const std::string directory = populated_store(dir);
  const double last_access_before = open_store(directory)->list()[0].last_access;
  const std::string index_before = read_bytes(directory + "/index.sqlite");
  const auto segments_before = segments_in(fs::path(directory) / "segments");

  auto store = open_store(directory, /*read_only=*/true);
  CHECK(store->read_only());
  CHECK_THAT(joined(store->open_report().notes),
             Catch::Contains("is read-only (opened read-only as asked): cached templates are reused"));
  CHECK(store->list().size() == 2);
  CHECK(capture_intact(*store, 1));  // a cache hit
  CHECK(capture_intact(*store, 2));
  CHECK(store->stats().captures == 2);
  CHECK(store->verify().damaged == 0);

  CHECK_THROWS_AS(store->begin(capture_name(3)), IoError);
  CHECK_THROWS_WITH(store->begin(capture_name(3)), Catch::Contains("is read-only, so templates are not registered"));
  CHECK_THROWS_WITH(store->evict_to(0), Catch::Contains("is read-only, so nothing can be evicted"));
  CHECK_THROWS_WITH(store->remove("template1"), Catch::Contains("is read-only, so nothing can be removed"));
  CHECK_THROWS_WITH(store->gc(), Catch::Contains("is read-only, so it cannot be repaired"));
  store.reset();

  CHECK(read_bytes(directory + "/index.sqlite") == index_before);  // not even last_access moved
  CHECK_FALSE(fs::exists(directory + "/index.sqlite-shm"));
  CHECK(segments_in(fs::path(directory) / "segments") == segments_before);
  CHECK(open_store(directory)->list()[0].last_access == last_access_before);
}

TEST_CASE("a folder this process cannot write opens read-only by itself", "[cache][store]") {
  if (::geteuid() == 0) {
    WARN("skipped: permissions do not bind root (tests/cli/cli_store_degraded.sh mounts a read-only store)");
    return;
  }
  test::TempDir dir;
  const std::string directory = populated_store(dir);
  fs::permissions(directory, fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                  fs::perm_options::remove);
  {
    auto store = open_store(directory);
    CHECK(store->read_only());
    CHECK_THAT(joined(store->open_report().notes), Catch::Contains("`chmod -R u+w " + directory + "`"));
    CHECK(capture_intact(*store, 1));
    CHECK_THROWS_WITH(store->evict_to(0), Catch::Contains("read-only"));
  }
  fs::permissions(directory, fs::perms::owner_write, fs::perm_options::add);
  CHECK(open_store(directory)->list().size() == 2);
}

TEST_CASE("an unreadable index in a read-only store is left in place and the error names the fix",
          "[cache][store]") {
  test::TempDir dir;
  const std::string directory = populated_store(dir);
  std::ofstream(directory + "/index.sqlite", std::ios::binary | std::ios::trunc) << std::string(5000, 'y');
  CHECK_THROWS_AS(open_store(directory, /*read_only=*/true), CorruptDataError);
  CHECK_THROWS_WITH(open_store(directory, /*read_only=*/true),
                    Catch::Contains("cannot be moved aside: make it writable and run `flashps cache gc`"));
  CHECK(read_bytes(directory + "/index.sqlite") == std::string(5000, 'y'));
  CHECK(segments_in(fs::path(directory) / "segments").size() == 2);
}

TEST_CASE("a capture whose segment went first is a miss until gc drops its row", "[cache][store]") {
  // remove/evict unlink the bytes before writing the index (so they work on a full disk); a
  // row left behind by a crash in between is a miss and gc removes it.
  test::TempDir dir;
  const std::string directory = populated_store(dir);
  auto store = open_store(directory);
  for (const StoredCapture& capture : store->list())
    if (capture.capture_id.template_hash == "template1") fs::remove(fs::path(directory) / "segments" / capture.segment);
  CHECK_FALSE(store->find(capture_name(1)));
  CHECK(store->gc().removed_captures == 1);
  CHECK(store->remove("template2") == 1);
  CHECK(store->list().empty());
  CHECK(segments_in(fs::path(directory) / "segments").empty());
}
