// A writer stopped at each durability step of the activation store (cache/fault_points.h): the
// child process reports every capture it committed through a pipe and is SIGKILLed by the hook at
// the chosen step, 20 times per step; afterwards the store opens, every reported capture is served
// bit-exact, no orphan segment is left, and the interrupted capture is whole or absent. The same
// with a simulated power cut (cache/durable_io.h: what was not synced is lost), which a missing or
// misplaced flush fails (scripts/check-crash-test-catches.sh). Then a full disk and read errors,
// injected at the same hooks, under a pipeline's edits.
#include <ATen/ATen.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <string>

#include "cache/activation_store.h"
#include "cache/durable_io.h"
#include "cache/fault_points.h"
#include "pipeline/flux/flux_inpaint_pipeline.h"
#include "support/store_test_support.h"
#include "support/temp_dir.h"
#include "support/tiny_pipeline.h"

using namespace flashps;
using namespace flashps::cache;

namespace {

using test::open_small_store;

// The child's hook: kills the process the `remaining`-th time it reaches `target`, after losing
// what a power cut would when `power_cut` is set.
FaultPoint target = FaultPoint::segment_created;
int remaining = 0;
bool power_cut = false;
int kill_at_target(FaultPoint point) {
  if (point == target && --remaining == 0) {
    if (power_cut) lose_unsynced_writes();
    ::raise(SIGKILL);
  }
  return 0;
}

struct ChildRun {
  std::set<int> committed;  // captures the child reported after commit() returned
  int status = 0;
};

// Forks a writer that commits captures first_index, first_index + 1, ... (reporting each on a
// pipe) until the hook kills it at the `occurrence`-th `point`.
ChildRun run_writer(const std::string& directory, FaultPoint point, int occurrence, int first_index, bool cut_power) {
  int pipe_ends[2];
  REQUIRE(::pipe(pipe_ends) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(pipe_ends[0]);
    int code = 0;
    try {
      auto store = open_small_store(directory);
      target = point;
      remaining = occurrence;
      power_cut = cut_power;
      record_durability(cut_power);
      set_fault_hook(kill_at_target);
      for (int i = 0; i < 100; ++i) {
        test::write_capture(*store, first_index + i, 2, 3, 32, 16);
        const std::string line = std::to_string(first_index + i) + "\n";
        if (::write(pipe_ends[1], line.data(), line.size()) != static_cast<ssize_t>(line.size())) code = 5;
      }
      code = 4;  // the hook never fired: the point was not reached
    } catch (const std::exception& error) {
      std::fprintf(stderr, "writer %d: %s\n", int(::getpid()), error.what());
      code = 3;
    }
    ::_exit(code);
  }
  ::close(pipe_ends[1]);
  ChildRun run;
  std::string text;
  char buffer[256];
  for (ssize_t got; (got = ::read(pipe_ends[0], buffer, sizeof buffer)) > 0;) text.append(buffer, size_t(got));
  ::close(pipe_ends[0]);
  ::waitpid(pid, &run.status, 0);
  for (size_t at = 0, end; (end = text.find('\n', at)) != std::string::npos; at = end + 1)
    run.committed.insert(std::stoi(text.substr(at, end - at)));
  return run;
}

// Kills a writer 20 times at each durability step (with a power cut: `cut_power`) and checks
// the store each time.
void kill_at_each_durability_step(bool cut_power) {
  test::TempDir dir;
  const std::string directory = dir.file("store");
  open_small_store(directory);
  std::mt19937 random(2026);
  std::set<int> all_committed;
  int next_index = 0, runs = 0;
  for (int point_number = 0; point_number < kDurabilityStepCount; ++point_number) {
    const auto point = static_cast<FaultPoint>(point_number);
    for (int trial = 0; trial < 20; ++trial, ++runs) {
      const int occurrence = std::uniform_int_distribution<int>(1, 3)(random);
      INFO(fault_point_name(point) << " trial " << trial << ", killed at occurrence " << occurrence);
      const ChildRun run = run_writer(directory, point, occurrence, next_index, cut_power);
      // Killed by the hook, not ended early by an error (exit 3) or a missed point (exit 4).
      REQUIRE(WIFSIGNALED(run.status));
      REQUIRE(WTERMSIG(run.status) == SIGKILL);
      // The capture written when the hook fired is the occurrence-th; the ones before it returned.
      CHECK(run.committed.size() == static_cast<size_t>(occurrence - 1));
      all_committed.insert(run.committed.begin(), run.committed.end());
      const int interrupted = next_index + occurrence - 1;
      next_index += 100;

      auto store = open_small_store(directory);  // recovery runs here
      std::set<int> listed;
      for (const StoredCapture& capture : store->list())
        listed.insert(std::stoi(capture.capture_id.template_hash.substr(8)));
      for (int index : all_committed) {
        INFO("committed capture " << index);
        CHECK(listed.count(index) == 1);
        CHECK(test::capture_intact(*store, index, 2, 3, 32, 16));
      }
      // Killed after the index committed, the interrupted capture is whole; before, it is absent.
      if (point == FaultPoint::index_committed) {
        CHECK(listed.count(interrupted) == 1);
        CHECK(test::capture_intact(*store, interrupted, 2, 3, 32, 16));
        all_committed.insert(interrupted);
      } else {
        CHECK(listed.count(interrupted) == 0);
      }
      CHECK(listed.size() == all_committed.size());
      CHECK(store->stats().segment_files == static_cast<int64_t>(listed.size()));  // no orphan
      const VerifyReport verified = store->verify();
      CHECK(verified.damaged == 0);
      CHECK(verified.entries_checked == static_cast<int64_t>(6 * listed.size()));
    }
  }
  CHECK(runs == 20 * kDurabilityStepCount);
  CHECK_FALSE(all_committed.empty());
}

}  // namespace

TEST_CASE("a writer killed at each durability step loses nothing committed and leaves no orphan",
          "[cache][crash][faults][slow]") {
  kill_at_each_durability_step(/*cut_power=*/false);
}

// A kill keeps the page cache, so it cannot tell a flushed segment from an unflushed one; a power
// cut at the same steps can (scripts/check-crash-test-catches.sh shows the difference).
TEST_CASE("a power cut at each durability step loses nothing committed and leaves no orphan",
          "[cache][crash][faults][power_cut][slow]") {
  kill_at_each_durability_step(/*cut_power=*/true);
}

namespace {

// Atomics: the store may read on a prefetch thread.
std::atomic<int> injected_errno{0};
std::atomic<FaultPoint> injected_at{FaultPoint::segment_append};
std::atomic<int> succeed_first{0};  // calls at the point that go through before the failures start
std::atomic<int> injections{0};
int fail_io(FaultPoint point) {
  if (point != injected_at || succeed_first-- > 0) return 0;
  ++injections;
  return injected_errno;
}

// Clears the hook however the test section ends.
struct FaultHookGuard {
  FaultHookGuard(FaultPoint point, int error, int succeeding = 0) {
    injected_at = point;
    injected_errno = error;
    succeed_first = succeeding;
    injections = 0;
    set_fault_hook(fail_io);
  }
  ~FaultHookGuard() { set_fault_hook(nullptr); }
};

int notes_containing(const EditStats& stats, const std::string& text) {
  int count = 0;
  for (const std::string& note : stats.notes) count += note.find(text) != std::string::npos;
  return count;
}

}  // namespace

TEST_CASE("a full disk or a read error costs an edit nothing and loses nothing committed",
          "[cache][faults][pipeline]") {
  test::TempDir dir;
  const std::string model = test::tiny_model(dir);
  ActivationStoreOptions options;
  options.directory = dir.file("store");
  options.host_capacity_bytes = 0;  // every read goes to the segment file
  auto store = ActivationStore::open(options);
  auto pipeline = FluxInpaintPipeline::load(model, at::kFloat, store);
  const Image image = test::gradient_image(64, 48);
  EditRequest request = test::request_for(image, test::box_mask(64, 48, 16, 16, 20), 5);
  EditRequest full_request = request;
  full_request.mode = CacheMode::full;
  const Image full = pipeline->edit(full_request).image;
  const TemplateInfo registered = pipeline->register_template(request);
  REQUIRE_FALSE(registered.template_hash.empty());

  SECTION("ENOSPC while registering: a clear error, no capture, no orphan, the first capture intact") {
    EditRequest other = test::request_for(test::gradient_image(48, 48), test::box_mask(48, 48, 8, 8, 16), 6);
    {
      FaultHookGuard guard(FaultPoint::segment_append, ENOSPC);
      CHECK_THROWS_WITH(pipeline->register_template(other),
                        Catch::Contains("No space left on device") && Catch::Contains("flashps cache evict"));
      CHECK(injections >= 1);
      // An edit meanwhile still succeeds: it computes what it cannot replay.
      CHECK(pipeline->edit(other).stats.steps_run == 3);
    }
    CHECK(store->list().size() == 1);
    CHECK(store->stats().segment_files == 1);
    request.mode = CacheMode::hidden;
    const EditResult replayed = pipeline->edit(request);
    CHECK(replayed.stats.cache_hit);
    CHECK(replayed.stats.entries_failed == 0);
    CHECK(test::max_pixel_difference(replayed.image, full) <= 1);
  }
  SECTION("EIO on reads: the edit computes instead and says so once; the capture serves again after") {
    request.mode = CacheMode::hidden;
    {
      // Every read fails: the template's own mask is unreadable, so the edit runs in full.
      FaultHookGuard guard(FaultPoint::segment_read, EIO);
      const EditResult edited = pipeline->edit(request);
      INFO("notes: " << test::joined_notes(edited.stats));
      CHECK(injections > 0);
      CHECK_FALSE(edited.stats.cache_hit);
      CHECK(notes_containing(edited.stats, "Input/output error") == 1);
      CHECK(notes_containing(edited.stats, "unreadable") == 1);
      CHECK(test::max_pixel_difference(edited.image, full) <= 1);
    }
    {
      // The mask reads, then entries fail: each failed entry is computed instead, one note.
      FaultHookGuard guard(FaultPoint::segment_read, EIO, /*succeeding=*/1);
      const EditResult edited = pipeline->edit(request);
      INFO("notes: " << test::joined_notes(edited.stats));
      CHECK(injections > 0);
      CHECK(edited.stats.cache_hit);
      CHECK(edited.stats.entries_failed > 0);
      CHECK(notes_containing(edited.stats, "unreadable") == 1);
      CHECK(test::max_pixel_difference(edited.image, full) <= 1);
    }
    CHECK(store->verify().damaged == 0);  // nothing was quarantined: the error was the disk's, not the data's
    const EditResult replayed = pipeline->edit(request);
    CHECK(replayed.stats.cache_hit);
    CHECK(replayed.stats.entries_failed == 0);
    CHECK(test::max_pixel_difference(replayed.image, full) <= 1);
  }
}
