#define CATCH_CONFIG_MAIN
#include "plugin_test_support.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

namespace flashps::plugins::testing {

namespace fs = std::filesystem;

static fs::path executable_folder() { return fs::read_symlink("/proc/self/exe").parent_path(); }

std::string test_plugins_dir(const std::string& group) { return (executable_folder() / "test_plugins" / group).string(); }

std::string runner_path() {
  return (executable_folder().parent_path() / "libexec" / "flashps" / "flashps-plugin-runner").string();
}

PluginHost host_for(const std::string& group, Isolation isolation, double idle_timeout, int64_t memory_limit) {
  HostOptions options;
  options.search_path = {test_plugins_dir(group)};
  options.isolation = isolation;
  options.idle_timeout_seconds = idle_timeout;
  options.memory_limit_bytes = memory_limit;
  options.runner_path = runner_path();
  return PluginHost::open(options);
}

sdk::Image test_picture(uint32_t width, uint32_t height) {
  sdk::Image image(width, height, 3);
  for (uint32_t y = 0; y < height; ++y)
    for (uint32_t x = 0; x < width; ++x) {
      uint8_t* pixel = &image.pixels[(size_t(y) * width + x) * 3];
      pixel[0] = uint8_t(x * 255 / std::max(1u, width - 1));
      pixel[1] = uint8_t(y * 255 / std::max(1u, height - 1));
      pixel[2] = uint8_t((x + y) % 256);
    }
  return image;
}

sdk::Image box_mask(uint32_t width, uint32_t height, uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1) {
  sdk::Image mask(width, height, 1);
  for (uint32_t y = y0; y < y1 && y < height; ++y)
    for (uint32_t x = x0; x < x1 && x < width; ++x) mask.pixels[size_t(y) * width + x] = 255;
  return mask;
}

bool under_sanitizer() {
  const char* asan = std::getenv("FLASHPS_ASAN");
  return asan && std::string(asan) == "1";
}

}  // namespace flashps::plugins::testing
