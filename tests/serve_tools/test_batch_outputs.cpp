// Batch outputs (serve_tools/batch_outputs.h): what counts as written, atomic writes that leave nothing
// behind, and the removal of temporaries a killed run left.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "core/diagnostics/error.h"
#include "serve_tools/batch_outputs.h"
#include "support/tiny_pipeline.h"

using namespace flashps;
using namespace flashps::serve;
using namespace flashps::test;
namespace fs = std::filesystem;

namespace {

void truncate_to_half(const std::string& path) { fs::resize_file(path, fs::file_size(path) / 2); }

std::vector<std::string> names_in(const fs::path& folder) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// A pid that belonged to a process which has ended (a child that exited and was reaped).
pid_t ended_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

}  // namespace

TEST_CASE("batch outputs: only complete PNG and JPEG files count as written", "[serve][batch]") {
  TempDir dir;
  const Image image = gradient_image(16, 16);
  for (const std::string name : {"a.png", "a.jpg", "b.JPEG"}) {
    write_image(dir.file(name), image);
    CHECK(output_is_complete(dir.file(name)));
    truncate_to_half(dir.file(name));
    CHECK_FALSE(output_is_complete(dir.file(name)));
  }
  std::ofstream(dir.file("empty.png")).flush();
  CHECK_FALSE(output_is_complete(dir.file("empty.png")));
  CHECK_FALSE(output_is_complete(dir.file("missing.png")));
  fs::create_directories(dir.file("folder.png"));
  CHECK_FALSE(output_is_complete(dir.file("folder.png")));
  std::ofstream(dir.file("text.png")) << "not a PNG at all, but long enough to have a tail";
  CHECK_FALSE(output_is_complete(dir.file("text.png")));
}

TEST_CASE("batch outputs: atomic writes leave no temporaries, also when they fail", "[serve][batch]") {
  TempDir dir;
  const Image image = gradient_image(16, 16);
  write_output_atomically(dir.file("out/a.png"), image);
  CHECK(read_image(dir.file("out/a.png")).width == 16);
  CHECK(names_in(dir.file("out")) == std::vector<std::string>{"a.png"});

  fs::create_directories(dir.file("out/taken.png/inside"));  // rename onto a non-empty folder fails
  CHECK_THROWS_AS(write_output_atomically(dir.file("out/taken.png"), image), IoError);
  CHECK_THROWS_AS(write_output_atomically(dir.file("out/a.tiff"), image), UnsupportedError);
  CHECK(names_in(dir.file("out")) == std::vector<std::string>{"a.png", "taken.png"});

  const std::string partial = fs::path(partial_output_path(dir.file("out/a.png"))).filename();
  CHECK(partial == ".partial-" + std::to_string(::getpid()) + "-a.png");
}

TEST_CASE("batch outputs: stale .partial files are removed, a live writer's are kept", "[serve][batch]") {
  TempDir dir;
  fs::create_directories(dir.file("out"));
  const std::string legacy = ".partial-x.png.tmp-123-0";  // before pids were in the name
  const std::string ended = ".partial-" + std::to_string(ended_pid()) + "-y.png.tmp-1-0";
  const std::string live = ".partial-" + std::to_string(::getppid()) + "-z.png";  // our parent runs
  const std::string own = ".partial-" + std::to_string(::getpid()) + "-w.png";  // an earlier process's
  for (const std::string& name : {legacy, ended, live, own, std::string("keep.png"), std::string("partial-no-dot.png")})
    std::ofstream(dir.file("out/" + name)) << "bytes";
  fs::create_directories(dir.file("out/.partial-folder"));  // not a file: left alone

  CHECK(remove_stale_partials({dir.file("out"), dir.file("out"), dir.file("absent")}) == 3);
  std::vector<std::string> kept{".partial-folder", live, "keep.png", "partial-no-dot.png"};
  std::sort(kept.begin(), kept.end());
  CHECK(names_in(dir.file("out")) == kept);
  CHECK(remove_stale_partials({dir.file("out")}) == 0);
}
