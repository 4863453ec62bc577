// Crash safety and multi-process use of the activation store: writers are SIGKILLed at random
// moments, and two processes write and read one store at the same time.
#include <ATen/ATen.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <thread>

#include "cache/activation_store.h"
#include "support/store_test_support.h"
#include "support/temp_dir.h"

using namespace flashps;
using namespace flashps::cache;

namespace {

using test::open_small_store;

// Runs `body` in a child process; returns its pid. The child never returns into Catch2.
template <typename Body>
pid_t spawn(Body body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    int code = 0;
    try {
      body();
    } catch (const std::exception& error) {
      std::fprintf(stderr, "child %d: %s\n", int(::getpid()), error.what());
      code = 3;
    }
    ::_exit(code);
  }
  return pid;
}

int trials() { return std::getenv("FLASHPS_QUICK_TESTS") ? 10 : 50; }

}  // namespace

TEST_CASE("a writer killed at any moment never leaves a bad entry behind", "[cache][crash]") {
  test::TempDir dir;
  const std::string directory = dir.file("store");
  open_small_store(directory);
  std::mt19937 random(12345);
  int committed_total = 0;
  std::set<int> reported;  // captures a child said it committed (commit() returned)
  for (int trial = 0; trial < trials(); ++trial) {
    int progress[2];
    REQUIRE(::pipe(progress) == 0);
    const pid_t child = spawn([&] {
      ::close(progress[0]);
      auto store = open_small_store(directory);
      for (int i = 0;; ++i) {
        test::write_capture(*store, 1000 * (trial + 1) + i, 2, 4, 128, 64);
        const std::string line = std::to_string(1000 * (trial + 1) + i) + "\n";
        if (::write(progress[1], line.data(), line.size()) != static_cast<ssize_t>(line.size())) ::_exit(5);
      }
    });
    REQUIRE(child > 0);
    ::close(progress[1]);
    // A random moment: after the child has reported 0-2 commits, then 0-60 ms more. Counting
    // commits first keeps trials that get past a commit however slow the machine (a loaded
    // machine or a sanitizer build may take over 60 ms to open the store and write one).
    const long commits_first = std::uniform_int_distribution<long>(0, 2)(random);
    std::string text;
    char buffer[256];
    for (ssize_t got; std::count(text.begin(), text.end(), '\n') < commits_first &&
                      (got = ::read(progress[0], buffer, sizeof buffer)) > 0;)
      text.append(buffer, size_t(got));
    std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int>(0, 60000)(random)));
    ::kill(child, SIGKILL);
    for (ssize_t got; (got = ::read(progress[0], buffer, sizeof buffer)) > 0;) text.append(buffer, size_t(got));
    ::close(progress[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    // The kill ended it, not an early failure (a child that threw exits with 3 and would pass
    // every check below with nothing written).
    REQUIRE(WIFSIGNALED(status));
    REQUIRE(WTERMSIG(status) == SIGKILL);
    for (size_t at = 0, end; (end = text.find('\n', at)) != std::string::npos; at = end + 1)
      reported.insert(std::stoi(text.substr(at, end - at)));

    auto store = open_small_store(directory);  // recovery runs here
    const auto captures = store->list();
    committed_total = static_cast<int>(captures.size());
    std::set<int> listed;
    for (const StoredCapture& capture : captures) listed.insert(std::stoi(capture.capture_id.template_hash.substr(8)));
    for (int index : reported) {
      INFO("trial " << trial << ": capture " << index << " was reported committed");
      CHECK(listed.count(index) == 1);
    }
    for (const StoredCapture& capture : captures) {
      const int index = std::stoi(capture.capture_id.template_hash.substr(8));
      INFO("trial " << trial << " capture " << index);
      REQUIRE(test::capture_intact(*store, index, 2, 4, 128, 64));
    }
    // No orphan bytes survive recovery, and a new registration completes.
    CHECK(store->stats().segment_files == static_cast<int64_t>(captures.size()));
    test::write_capture(*store, 999999, 2, 4, 128, 64);
    REQUIRE(test::capture_intact(*store, 999999, 2, 4, 128, 64));
    store->remove("template999999");
  }
  CHECK(committed_total > 0);  // some trials got as far as committing
}

TEST_CASE("two processes writing and reading one store see consistent captures", "[cache][processes]") {
  test::TempDir dir;
  const std::string directory = dir.file("store");
  open_small_store(directory);
  std::vector<pid_t> children;
  for (int process = 0; process < 2; ++process)
    children.push_back(spawn([&, process] {
      auto store = open_small_store(directory);
      for (int i = 0; i < 12; ++i) {
        test::write_capture(*store, i % 6 + 100 * (i % 2 == 0 ? process : 9));  // some ids shared
        for (const StoredCapture& capture : store->list()) {
          const int index = std::stoi(capture.capture_id.template_hash.substr(8));
          if (!test::capture_intact(*store, index)) ::_exit(4);
        }
      }
    }));
  for (pid_t child : children) {
    int status = 0;
    ::waitpid(child, &status, 0);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  auto store = open_small_store(directory);
  const auto captures = store->list();
  std::set<std::string> names;
  for (const StoredCapture& capture : captures) {
    names.insert(capture.capture_id.template_hash);
    CHECK(test::capture_intact(*store, std::stoi(capture.capture_id.template_hash.substr(8))));
  }
  CHECK(names.size() == captures.size());  // no duplicates
  CHECK(captures.size() == 3 + 3 + 3);     // 0,2,4 of each process + 901,903,905 shared
  CHECK(store->stats().segment_files == static_cast<int64_t>(captures.size()));
}
