// An index path that is not a regular file (a directory, a FIFO, a link to nothing) is moved
// aside like an unreadable index, kept and named; where it cannot be moved, the store opens
// without an index (read-only, empty) and says how to recover. Nothing stored is lost.
// (Through the CLI and serve: tests/cli/cli_store_index_not_a_file.sh.)
#include <sys/stat.h>
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

std::map<std::string, std::string> segments_in(const fs::path& folder) {
  std::map<std::string, std::string> segments;
  for (const auto& file : fs::directory_iterator(folder))
    if (file.path().extension() == ".seg") segments[file.path().filename().string()] = read_bytes(file.path());
  return segments;
}

std::vector<fs::path> entries_starting(const fs::path& folder, const std::string& prefix) {
  std::vector<fs::path> found;
  for (const auto& file : fs::directory_iterator(folder)) {
    const std::string name = file.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && name.find("-wal") == std::string::npos && name.find("-shm") == std::string::npos)
      found.push_back(file.path());
  }
  return found;
}

std::string joined(const std::vector<std::string>& notes) {
  std::string text;
  for (const std::string& note : notes) text += note + "\n";
  return text;
}

// A closed store with captures 1 and 2 whose index.sqlite is then a directory holding a file.
std::string store_with_directory_index(const test::TempDir& dir) {
  const std::string directory = dir.file("store");
  {
    auto store = open_store(directory);
    write_capture(*store, 1);
    write_capture(*store, 2);
  }
  const std::string index = directory + "/index.sqlite";
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(index + suffix);
  fs::create_directory(index);
  std::ofstream(index + "/keep") << "kept";
  return directory;
}

}  // namespace

TEST_CASE("an index path that is a directory is moved aside like an unreadable index", "[cache][store]") {
  test::TempDir dir;
  const std::string directory = store_with_directory_index(dir);
  const auto segments_before = segments_in(fs::path(directory) / "segments");
  REQUIRE(segments_before.size() == 2);

  auto store = open_store(directory);
  CHECK_FALSE(store->read_only());
  CHECK(store->list().empty());
  const std::string notes = joined(store->open_report().notes);
  CHECK_THAT(notes, Catch::Contains("index.sqlite was unreadable (it is a directory, not a file): moved to"));
  CHECK_THAT(notes, Catch::Contains("2 segment file(s)"));

  // Nothing lost: the directory with its file, every segment byte for byte.
  const auto moved = entries_starting(directory, "index.sqlite.corrupt-");
  REQUIRE(moved.size() == 1);
  CHECK(read_bytes(moved[0] / "keep") == "kept");
  CHECK_THAT(notes, Catch::Contains(moved[0].string()));
  const auto kept = entries_starting(directory, "unindexed-");
  REQUIRE(kept.size() == 1);
  CHECK(segments_in(kept[0]) == segments_before);

  // A working index took its place.
  CHECK(fs::is_regular_file(directory + "/index.sqlite"));
  write_capture(*store, 3);
  CHECK(capture_intact(*store, 3));
  CHECK(store->gc().removed_segments == 0);
  store.reset();
  CHECK(open_store(directory)->open_report().notes.empty());
}

TEST_CASE("a FIFO or a link to nothing as the index path is moved aside the same way", "[cache][store]") {
  test::TempDir dir;
  const std::string directory = store_with_directory_index(dir);
  const std::string index = directory + "/index.sqlite";
  fs::remove_all(index);
  std::string expected;
  SECTION("a FIFO (SQLite would block reading it)") {
    REQUIRE(::mkfifo(index.c_str(), 0644) == 0);
    expected = "(it is a FIFO, not a file)";
  }
  SECTION("a symbolic link to nothing") {
    fs::create_symlink(dir.file("nowhere"), index);
    expected = "(it is a symbolic link to nothing, not a file)";
  }
  auto store = open_store(directory);
  CHECK(store->list().empty());
  CHECK_THAT(joined(store->open_report().notes), Catch::Contains(expected));
  CHECK(fs::is_regular_file(index));
  CHECK_FALSE(fs::exists(dir.file("nowhere")));  // the link was moved, not followed
  CHECK(entries_starting(directory, "index.sqlite.corrupt-").size() == 1);
}

TEST_CASE("an index path that is a directory in a read-only store: opened without an index, nothing changed",
          "[cache][store]") {
  test::TempDir dir;
  const std::string directory = store_with_directory_index(dir);
  const auto segments_before = segments_in(fs::path(directory) / "segments");

  auto store = open_store(directory, /*read_only=*/true);
  CHECK(store->read_only());
  CHECK(store->list().empty());
  CHECK(store->stats().captures == 0);
  CHECK(store->verify().damaged == 0);
  CHECK_FALSE(store->find(capture_name(1)));  // a miss: the edit computes in full
  const std::string notes = joined(store->open_report().notes);
  CHECK_THAT(notes, Catch::Contains("the store opened without an index"));
  CHECK_THAT(notes, Catch::Contains("index.sqlite is a directory, not the index"));
  CHECK_THAT(notes, Catch::Contains("`mv " + directory + "/index.sqlite " + directory + "/index.sqlite.aside`"));
  CHECK_THROWS_WITH(store->gc(), Catch::Contains("so it cannot be repaired (") && Catch::Contains("`mv "));
  CHECK_THROWS_AS(store->begin(capture_name(3)), IoError);
  store.reset();

  CHECK(fs::is_directory(directory + "/index.sqlite"));
  CHECK(read_bytes(directory + "/index.sqlite/keep") == "kept");
  CHECK(segments_in(fs::path(directory) / "segments") == segments_before);
  CHECK(entries_starting(directory, "index.sqlite.corrupt-").empty());
}

TEST_CASE("an index path that is a directory and cannot be moved: opened without an index, saying why",
          "[cache][store]") {
  // Moving aside takes recovery.lock first; a directory in its place makes the move fail even
  // for root (whom a read-only folder would not stop).
  test::TempDir dir;
  const std::string directory = store_with_directory_index(dir);
  fs::create_directory(directory + "/recovery.lock");

  auto store = open_store(directory);
  CHECK(store->read_only());
  CHECK(store->list().empty());
  const std::string notes = joined(store->open_report().notes);
  CHECK_THAT(notes, Catch::Contains("the store opened without an index"));
  CHECK_THAT(notes, Catch::Contains("(it is a directory, not a file) and cannot be moved aside (Is a directory)"));
  CHECK_THAT(notes, Catch::Contains("`flashps cache gc`"));
  CHECK_THROWS_WITH(store->evict_to(0), Catch::Contains("so nothing can be evicted"));
  store.reset();
  CHECK(read_bytes(directory + "/index.sqlite/keep") == "kept");
  CHECK(segments_in(fs::path(directory) / "segments").size() == 2);

  // Once the way is clear, the next open moves it aside as usual.
  fs::remove(directory + "/recovery.lock");
  auto repaired = open_store(directory);
  CHECK_FALSE(repaired->read_only());
  CHECK_THAT(joined(repaired->open_report().notes), Catch::Contains("moved to"));
}
