// flashps/store.h: open, list, stats, verify, evict, remove (prefix rules), gc, and a store shared
// with an editor.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "api/api_test_support.h"
#include "cache/activation_store.h"
#include "flashps/flashps.h"
#include "support/store_test_support.h"

using namespace flashps::test::api;
namespace fs = std::filesystem;

namespace {

struct Listed {
  std::vector<std::string> hashes;
  int stop_after = -1;
};

int list_capture(const flashps_capture_info* capture, void* user_data) {
  auto* listed = static_cast<Listed*>(user_data);
  listed->hashes.emplace_back(capture->template_hash);
  return static_cast<int>(listed->hashes.size()) == listed->stop_after ? 0 : 1;
}

std::vector<std::string> hashes(flashps_store* store) {
  Listed listed;
  REQUIRE(flashps_store_list(store, list_capture, &listed) == FLASHPS_OK);
  return listed.hashes;
}

// Captures "template1".."template<count>" written through the C++ store on the same folder (as
// another process would): their hashes share prefixes, which real content hashes rarely do.
void write_named_captures(const std::string& directory, int count) {
  flashps::cache::ActivationStoreOptions options;
  options.directory = directory;
  auto store = flashps::cache::ActivationStore::open(options);
  for (int index = 1; index <= count; ++index) flashps::test::write_capture(*store, index);
}

std::vector<fs::path> segment_files(const std::string& directory) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(directory) / "segments"))
    if (entry.path().extension() == ".seg") files.push_back(entry.path());
  return files;
}

}  // namespace

TEST_CASE("store: open, list, stats and the default directory", "[api]") {
  flashps::test::TempDir dir;
  const std::string directory = dir.file("store");
  write_named_captures(directory, 2);
  const StorePtr store = open_store(directory);
  CHECK(std::string(flashps_store_directory(store.get())) == directory);
  CHECK(flashps_store_directory(nullptr) == nullptr);

  const std::vector<std::string> listed = hashes(store.get());
  CHECK(std::set<std::string>(listed.begin(), listed.end()) == std::set<std::string>{"template1", "template2"});
  Listed first_only;
  first_only.stop_after = 1;
  REQUIRE(flashps_store_list(store.get(), list_capture, &first_only) == FLASHPS_OK);
  CHECK(first_only.hashes.size() == 1);
  CHECK(flashps_store_list(nullptr, list_capture, nullptr) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_store_list(store.get(), nullptr, nullptr) == FLASHPS_INVALID_ARGUMENT);

  flashps_store_stats stats{};
  stats.struct_size = sizeof(stats);
  REQUIRE(flashps_store_get_stats(store.get(), &stats) == FLASHPS_OK);
  CHECK(stats.captures == 2);
  CHECK(stats.entries == 12);  // 2 steps x 3 blocks each
  CHECK(stats.bytes > 0);
  CHECK(stats.quarantined == 0);
  CHECK(stats.segment_files == 2);
  CHECK(stats.segment_bytes >= stats.bytes);
  CHECK(stats.host_capacity == int64_t{1} << 30);  // 0 in the params: 1 GiB
  CHECK(stats.disk_quota == 0);
  CHECK(stats.recovered_captures == 0);
  CHECK(stats.recovered_segments == 0);
  CHECK(flashps_store_get_stats(nullptr, &stats) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_store_get_stats(store.get(), nullptr) == FLASHPS_INVALID_ARGUMENT);

  CHECK_FALSE(std::string(flashps_store_default_directory()).empty());
  flashps_store* unopened = nullptr;
  CHECK(flashps_store_open(nullptr, nullptr) == FLASHPS_INVALID_ARGUMENT);
  flashps_store_params params = flashps_store_default_params();
  params.host_capacity_bytes = -1;
  CHECK(flashps_store_open(&params, &unopened) == FLASHPS_INVALID_ARGUMENT);
  params = flashps_store_default_params();
  params.disk_quota_bytes = -5;
  CHECK(flashps_store_open(&params, &unopened) == FLASHPS_INVALID_ARGUMENT);
  params = flashps_store_default_params();
  params.directory = "";
  CHECK(flashps_store_open(&params, &unopened) == FLASHPS_INVALID_ARGUMENT);
  const std::string blocked = dir.file("a_file");
  std::ofstream(blocked) << "x";  // a file where the store's folder should be
  params.directory = blocked.c_str();
  CHECK(flashps_store_open(&params, &unopened) == FLASHPS_IO_ERROR);
  CHECK(unopened == nullptr);
  flashps_store_close(nullptr);
}

TEST_CASE("store: verify finds damaged entries; its progress can cancel", "[api]") {
  flashps::test::TempDir dir;
  const std::string directory = dir.file("store");
  write_named_captures(directory, 1);
  const StorePtr store = open_store(directory);
  flashps_verify_report report{};
  report.struct_size = sizeof(report);
  int calls = 0;
  auto count = [](const char* stage, int, int, double, void* user_data) {
    ++*static_cast<int*>(user_data);
    return std::string(stage) == "verify" ? 1 : 0;
  };
  REQUIRE(flashps_store_verify(store.get(), count, &calls, &report) == FLASHPS_OK);
  CHECK(calls == 1);
  CHECK(report.entries_checked == 6);
  CHECK(report.damaged == 0);
  CHECK(std::string(report.problems).empty());

  // Flip a byte in the middle of the capture's tensor bytes.
  const std::vector<fs::path> segments = segment_files(directory);
  REQUIRE(segments.size() == 1);
  {
    std::fstream file(segments[0], std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(static_cast<std::streamoff>(fs::file_size(segments[0]) / 2));
    char byte = 0;
    file.read(&byte, 1);
    file.seekp(static_cast<std::streamoff>(fs::file_size(segments[0]) / 2));
    byte = static_cast<char>(byte ^ 0x5A);
    file.write(&byte, 1);
  }
  REQUIRE(flashps_store_verify(store.get(), nullptr, nullptr, &report) == FLASHPS_OK);
  CHECK(report.damaged == 1);
  CHECK_FALSE(std::string(report.problems).empty());
  REQUIRE(flashps_store_verify(store.get(), nullptr, nullptr, nullptr) == FLASHPS_OK);  // report optional

  auto cancel = [](const char*, int, int, double, void*) { return 0; };
  CHECK(flashps_store_verify(store.get(), cancel, nullptr, &report) == FLASHPS_CANCELLED);
  CHECK(flashps_store_verify(nullptr, nullptr, nullptr, &report) == FLASHPS_INVALID_ARGUMENT);
}

TEST_CASE("store: remove by prefix refuses short and ambiguous prefixes unless asked; evict; gc", "[api]") {
  flashps::test::TempDir dir;
  const std::string directory = dir.file("store");
  write_named_captures(directory, 3);
  const StorePtr store = open_store(directory);
  int removed = -1;
  CHECK(flashps_store_remove(store.get(), "tem", 0, &removed) == FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("shorter than 4 characters"));
  CHECK(flashps_store_remove(store.get(), nullptr, 0, &removed) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_store_remove(nullptr, "template1", 0, &removed) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_store_remove(store.get(), "zzzz", 0, &removed) == FLASHPS_NOT_FOUND);
  CHECK_THAT(last_error(), Catch::Contains("no capture's template hash starts with \"zzzz\""));
  CHECK(flashps_store_remove(store.get(), "templ", 0, &removed) == FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("matches 3 templates") && Catch::Contains("all_matching"));
  CHECK(hashes(store.get()).size() == 3);  // nothing removed

  REQUIRE(flashps_store_remove(store.get(), "template3", 0, &removed) == FLASHPS_OK);
  CHECK(removed == 1);
  CHECK(hashes(store.get()).size() == 2);
  REQUIRE(flashps_store_remove(store.get(), "templ", 1, &removed) == FLASHPS_OK);
  CHECK(removed == 2);
  CHECK(hashes(store.get()).empty());
  REQUIRE(flashps_store_remove(store.get(), "zzzz", 1, nullptr) == FLASHPS_NOT_FOUND);

  write_named_captures(directory, 2);
  int64_t freed = -1;
  CHECK(flashps_store_evict(store.get(), -1, &freed) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_store_evict(nullptr, 0, &freed) == FLASHPS_INVALID_ARGUMENT);
  REQUIRE(flashps_store_evict(store.get(), int64_t{1} << 40, &freed) == FLASHPS_OK);
  CHECK(freed == 0);
  REQUIRE(flashps_store_evict(store.get(), 0, &freed) == FLASHPS_OK);
  CHECK(freed > 0);
  CHECK(hashes(store.get()).empty());
  REQUIRE(flashps_store_evict(store.get(), 0, nullptr) == FLASHPS_OK);

  // gc: an index row whose segment vanished is removed, and the report says so.
  write_named_captures(directory, 1);
  const std::vector<fs::path> segments = segment_files(directory);
  REQUIRE(segments.size() == 1);
  fs::remove(segments[0]);
  flashps_gc_report report{};
  report.struct_size = sizeof(report);
  REQUIRE(flashps_store_gc(store.get(), &report) == FLASHPS_OK);
  CHECK(report.removed_captures == 1);
  CHECK(report.removed_segments == 0);
  CHECK_THAT(std::string(report.notes), Catch::Contains("segment is missing"));
  REQUIRE(flashps_store_gc(store.get(), nullptr) == FLASHPS_OK);
  CHECK(flashps_store_gc(nullptr, &report) == FLASHPS_INVALID_ARGUMENT);

  // A store opened after a crash reports what its recovery removed.
  write_named_captures(directory, 1);
  fs::remove(segment_files(directory).at(0));
  const StorePtr reopened = open_store(directory);
  flashps_store_stats stats{};
  stats.struct_size = sizeof(stats);
  REQUIRE(flashps_store_get_stats(reopened.get(), &stats) == FLASHPS_OK);
  CHECK(stats.recovered_captures == 1);
}

TEST_CASE("store: editors share an open store, which outlives its handle while they use it", "[api]") {
  flashps::test::TempDir dir;
  const std::string model = tiny_model(dir);
  StorePtr store = open_store(dir.file("store"));
  flashps_editor_params params = flashps_editor_default_params();
  params.store = store.get();
  params.capture_dir = "/ignored/when/a/store/is/given";
  const EditorPtr writer = open_editor(model, &params);
  const EditorPtr reader = open_editor(model, &params);
  store.reset();  // the editors keep the store alive

  const auto image = gradient(32, 32);
  const auto mask = box_mask(32, 32, 0, 0, 16);
  const flashps_edit_params edit = fast_params();
  REQUIRE(flashps_template_register(writer.get(), &image->view, &edit, nullptr) == FLASHPS_OK);
  int found = 0;
  REQUIRE(flashps_template_lookup(reader.get(), &image->view, &mask->view, &edit, &found) == FLASHPS_OK);
  CHECK(found == 1);
  flashps_image result{};
  flashps_edit_stats stats = empty_stats();
  REQUIRE(flashps_edit(reader.get(), &image->view, &mask->view, &edit, &result, &stats) == FLASHPS_OK);
  flashps_image_free(&result);
  CHECK(stats.cache_hit == 1);

  // capture_dir opens a store of its own, persistent across editors.
  flashps_editor_params own = flashps_editor_default_params();
  const std::string capture_dir = dir.file("captures");
  own.capture_dir = capture_dir.c_str();
  {
    const EditorPtr first = open_editor(model, &own);
    REQUIRE(flashps_template_register(first.get(), &image->view, &edit, nullptr) == FLASHPS_OK);
  }
  const EditorPtr second = open_editor(model, &own);
  REQUIRE(flashps_template_lookup(second.get(), &image->view, &mask->view, &edit, &found) == FLASHPS_OK);
  CHECK(found == 1);
  const StorePtr listing = open_store(capture_dir);
  CHECK(hashes(listing.get()).size() == 1);
}
