// flashps/editor.h thread safety: two editors run in parallel; one editor shared by two threads
// runs their calls one after the other, and both succeed with the images they give alone.
#include <catch2/catch.hpp>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/api_test_support.h"
#include "flashps/flashps.h"

using namespace flashps::test::api;

namespace {

struct Outcome {
  flashps_status status = FLASHPS_ERROR;
  std::string error;
  std::vector<uint8_t> pixels;
};

// Progress events of every thread, in the order they happened.
struct EventOrder {
  std::mutex mutex;
  std::vector<int> threads;
};

struct ThreadProgress {
  EventOrder* order;
  int thread;
};

int note_event(const char*, int, int, double, void* user_data) {
  auto* progress = static_cast<ThreadProgress*>(user_data);
  std::lock_guard<std::mutex> lock(progress->order->mutex);
  progress->order->threads.push_back(progress->thread);
  return 1;
}

Outcome edit_once(flashps_editor* editor, const flashps_image& image, const flashps_image& mask,
                  flashps_edit_params params) {
  Outcome outcome;
  flashps_image result{};
  outcome.status = flashps_edit(editor, &image, &mask, &params, &result, nullptr);
  outcome.error = flashps_last_error();
  if (outcome.status == FLASHPS_OK) outcome.pixels.assign(result.pixels, result.pixels + 32 * 32 * 3);
  flashps_image_free(&result);
  return outcome;
}

}  // namespace

TEST_CASE("two editors edit at the same time from two threads", "[api]") {
  flashps::test::TempDir dir;
  const EditorPtr first = open_editor(tiny_model(dir, "first", 11));
  const EditorPtr second = open_editor(tiny_model(dir, "second", 12));
  const auto image = gradient(32, 32);
  const auto mask = box_mask(32, 32, 0, 0, 16);
  const Outcome first_alone = edit_once(first.get(), image->view, mask->view, fast_params());
  const Outcome second_alone = edit_once(second.get(), image->view, mask->view, fast_params());
  REQUIRE(first_alone.status == FLASHPS_OK);
  REQUIRE(second_alone.status == FLASHPS_OK);

  Outcome a, b;
  std::thread ta([&] { a = edit_once(first.get(), image->view, mask->view, fast_params()); });
  std::thread tb([&] { b = edit_once(second.get(), image->view, mask->view, fast_params()); });
  ta.join();
  tb.join();
  INFO(a.error << " / " << b.error);
  CHECK(a.status == FLASHPS_OK);
  CHECK(b.status == FLASHPS_OK);
  CHECK(a.pixels == first_alone.pixels);
  CHECK(b.pixels == second_alone.pixels);
  CHECK(first_alone.pixels != second_alone.pixels);  // different weights: a mix-up would show
}

TEST_CASE("one editor shared by two threads: both edits succeed, one after the other", "[api]") {
  flashps::test::TempDir dir;
  const EditorPtr editor = open_editor(tiny_model(dir));
  const auto image = gradient(32, 32);
  const auto mask = box_mask(32, 32, 0, 0, 16);
  flashps_edit_params params = fast_params();
  params.steps = 4;  // long enough for the two calls to overlap if they could
  const Outcome alone = edit_once(editor.get(), image->view, mask->view, params);
  REQUIRE(alone.status == FLASHPS_OK);

  EventOrder order;
  ThreadProgress progress_a{&order, 0}, progress_b{&order, 1};
  flashps_edit_params params_a = params, params_b = params;
  params_a.progress = params_b.progress = note_event;
  params_a.user_data = &progress_a;
  params_b.user_data = &progress_b;
  Outcome a, b;
  std::thread ta([&] { a = edit_once(editor.get(), image->view, mask->view, params_a); });
  std::thread tb([&] { b = edit_once(editor.get(), image->view, mask->view, params_b); });
  ta.join();
  tb.join();
  INFO(a.error << " / " << b.error);
  REQUIRE(a.status == FLASHPS_OK);
  REQUIRE(b.status == FLASHPS_OK);
  CHECK(a.pixels == alone.pixels);
  CHECK(b.pixels == alone.pixels);
  // Serialised: every event of one edit comes before every event of the other.
  REQUIRE(order.threads.size() == 8);
  int switches = 0;
  for (size_t i = 1; i < order.threads.size(); ++i) switches += order.threads[i] != order.threads[i - 1];
  CHECK(switches == 1);
}
