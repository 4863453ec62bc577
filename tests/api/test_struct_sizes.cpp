// The struct_size rules of flashps/common.h on every kind of struct: params the caller passes
// (defaults beyond its size, newer structs with a zero tail accepted, with a set tail refused)
// and outputs the library fills (only the caller's size written).
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstring>

#include "api/abi_layout.h"
#include "api/api_test_support.h"
#include "flashps/flashps.h"

using namespace flashps::test::api;

TEST_CASE("editor params: zero, too small and set-tail sizes refused; API-1 and zero-tail sizes accepted", "[api]") {
  flashps::test::TempDir dir;
  const std::string model = tiny_model(dir);
  flashps_editor* editor = nullptr;
  flashps_editor_params params = flashps_editor_default_params();
  CHECK(params.struct_size == sizeof(flashps_editor_params));

  params.struct_size = 0;
  CHECK(flashps_editor_open(model.c_str(), &params, &editor) == FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("flashps_editor_params.struct_size is 0"));
  params.struct_size = offsetof(flashps_editor_params, device);  // shorter than API 1's layout
  CHECK(flashps_editor_open(model.c_str(), &params, &editor) == FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("smaller than the struct's first layout"));
  CHECK(editor == nullptr);

  Grown<flashps_editor_params> set_tail(flashps_editor_default_params(), 1);
  CHECK(flashps_editor_open(model.c_str(), &set_tail.params, &editor) == FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("a newer field this library cannot honour"));
  Grown<flashps_editor_params> zero_tail(flashps_editor_default_params());
  open_editor(model, &zero_tail.params);

  // An API-1 caller's struct ends at `device`: what lies beyond it (here: garbage) is never read.
  struct {
    flashps_editor_params params;
  } v1{};
  std::memset(&v1, 0xAB, sizeof v1);
  v1.params.struct_size = flashps::api::kEditorParamsV1Size;
  v1.params.threads = 0;
  v1.params.bf16 = 0;
  v1.params.capture_dir = nullptr;
  v1.params.device = "cpu";
  const EditorPtr opened = open_editor(model, &v1.params);
  flashps_model_info info{};
  info.struct_size = sizeof(info);
  REQUIRE(flashps_editor_info(opened.get(), &info) == FLASHPS_OK);
  CHECK(std::string(info.device) == "cpu");
  CHECK(info.bf16 == 0);
}

TEST_CASE("edit params and stats: size rules, API-1 structs keep the defaults of newer fields", "[api]") {
  flashps::test::TempDir dir;
  const EditorPtr editor = open_editor(tiny_model(dir));
  const auto image = gradient(32, 32);
  const auto mask = box_mask(32, 32, 0, 0, 16);
  flashps_image result{};

  flashps_edit_params params = fast_params();
  params.struct_size = 0;
  CHECK(flashps_edit(editor.get(), &image->view, &mask->view, &params, &result, nullptr) ==
        FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("flashps_edit_params.struct_size is 0"));
  params.struct_size = offsetof(flashps_edit_params, texture_transfer);  // older than API 1's last layout
  CHECK(flashps_edit(editor.get(), &image->view, &mask->view, &params, &result, nullptr) ==
        FLASHPS_INVALID_ARGUMENT);
  Grown<flashps_edit_params> set_tail(fast_params(), 2);
  CHECK(flashps_edit(editor.get(), &image->view, &mask->view, &set_tail.params, &result, nullptr) ==
        FLASHPS_INVALID_ARGUMENT);
  CHECK(result.pixels == nullptr);
  Grown<flashps_edit_params> zero_tail(fast_params());
  REQUIRE(flashps_edit(editor.get(), &image->view, &mask->view, &zero_tail.params, &result, nullptr) == FLASHPS_OK);
  flashps_image_free(&result);

  // API 1 ends at texture_transfer: the prompt pointers behind it are garbage, never read.
  flashps_edit_params v1 = fast_params();
  v1.cache_mode = FLASHPS_CACHE_FULL;  // no template-miss note
  std::memset(reinterpret_cast<unsigned char*>(&v1) + flashps::api::kEditParamsV1Size, 0xCD,
              sizeof v1 - flashps::api::kEditParamsV1Size);
  v1.struct_size = flashps::api::kEditParamsV1Size;
  flashps_edit_stats stats = empty_stats();
  REQUIRE(flashps_edit(editor.get(), &image->view, &mask->view, &v1, &result, &stats) == FLASHPS_OK);
  CHECK(stats.steps_run == 2);
  CHECK(stats.note_count == 0);  // no prompt was read (it would have added a note)
  CHECK(std::string(stats.notes).empty());
  flashps_image_free(&result);

  // Stats: an API-1 caller's struct gets only its bytes written.
  struct {
    flashps_edit_stats stats;
  } old{};
  std::memset(&old, 0xEE, sizeof old);
  old.stats.struct_size = flashps::api::kEditStatsV1Size;
  params = fast_params();
  REQUIRE(flashps_edit(editor.get(), &image->view, &mask->view, &params, &result, &old.stats) == FLASHPS_OK);
  flashps_image_free(&result);
  CHECK(old.stats.struct_size == flashps::api::kEditStatsV1Size);
  CHECK(old.stats.steps_run == 2);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&old.stats);
  bool tail_untouched = true;
  for (size_t i = flashps::api::kEditStatsV1Size; i < sizeof old.stats; ++i) tail_untouched &= bytes[i] == 0xEE;
  CHECK(tail_untouched);

  // A newer caller's larger stats struct is fine: the library writes what it knows.
  Grown<flashps_edit_stats> bigger(empty_stats(), 0x77);
  REQUIRE(flashps_edit(editor.get(), &image->view, &mask->view, &params, &result, &bigger.params) == FLASHPS_OK);
  flashps_image_free(&result);
  CHECK(bigger.params.steps_run == 2);
  CHECK(bigger.extra[0] == 0x77);

  // Too small or zero: refused before any work.
  stats.struct_size = 0;
  CHECK(flashps_edit(editor.get(), &image->view, &mask->view, &params, &result, &stats) == FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("flashps_edit_stats.struct_size is 0"));
  stats.struct_size = flashps::api::kEditStatsV1Size - 8;
  CHECK(flashps_edit(editor.get(), &image->view, &mask->view, &params, &result, &stats) == FLASHPS_INVALID_ARGUMENT);
  CHECK(result.pixels == nullptr);
}

TEST_CASE("outputs new in API 2 refuse sizes below their layout: model info, store stats, reports", "[api]") {
  flashps::test::TempDir dir;
  const EditorPtr editor = open_editor(tiny_model(dir));
  flashps_model_info info{};
  CHECK(flashps_editor_info(editor.get(), &info) == FLASHPS_INVALID_ARGUMENT);  // struct_size 0
  info.struct_size = offsetof(flashps_model_info, bf16);
  CHECK(flashps_editor_info(editor.get(), &info) == FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("flashps_model_info"));

  flashps_store_params store_params = flashps_store_default_params();
  const std::string directory = dir.file("store");
  store_params.directory = directory.c_str();
  store_params.struct_size = offsetof(flashps_store_params, disk_quota_bytes);
  flashps_store* store = nullptr;
  CHECK(flashps_store_open(&store_params, &store) == FLASHPS_INVALID_ARGUMENT);
  CHECK(store == nullptr);
  Grown<flashps_store_params> set_tail(flashps_store_default_params(), 3);
  set_tail.params.directory = directory.c_str();
  CHECK(flashps_store_open(&set_tail.params, &store) == FLASHPS_INVALID_ARGUMENT);
  Grown<flashps_store_params> zero_tail(flashps_store_default_params());
  zero_tail.params.directory = directory.c_str();
  REQUIRE(flashps_store_open(&zero_tail.params, &store) == FLASHPS_OK);
  const StorePtr opened(store);

  flashps_store_stats stats{};
  stats.struct_size = sizeof(stats) - 8;
  CHECK(flashps_store_get_stats(store, &stats) == FLASHPS_INVALID_ARGUMENT);
  flashps_verify_report verify{};
  CHECK(flashps_store_verify(store, nullptr, nullptr, &verify) == FLASHPS_INVALID_ARGUMENT);
  flashps_gc_report gc{};
  gc.struct_size = 8;
  CHECK(flashps_store_gc(store, &gc) == FLASHPS_INVALID_ARGUMENT);
}
