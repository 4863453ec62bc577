// A third-party program hosting FlashPS filter plugins through libflashps_plugin_host.so
// (FlashPS::plugin_host): lists the plugins the installation and FLASHPS_PLUGIN_PATH offer, runs one
// on an image and its selection, saves the results and checks that they changed the selection.
//   plugin_host_consumer IMAGE MASK OUT_DIR PLUGIN [key=value ...]
#include <cstdio>
#include <exception>
#include <string>

#include <flashps/plugin_host.hpp>

namespace fpp = flashps::plugins;
namespace fps = flashps::sdk;

namespace {

// Pixels (of the first three channels) that differ between two images of the same size.
size_t changed_pixels(const fps::Image& before, const fps::Image& after) {
  if (before.width != after.width || before.height != after.height) return before.width * size_t(before.height);
  size_t changed = 0;
  for (size_t i = 0; i < size_t(before.width) * before.height; ++i)
    for (uint32_t c = 0; c < 3; ++c)
      if (before.pixels[i * before.channels + c] != after.pixels[i * after.channels + c]) {
        ++changed;
        break;
      }
  return changed;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s IMAGE MASK OUT_DIR PLUGIN [key=value ...]\n", argv[0]);
    return 2;
  }
  try {
    const fpp::PluginHost host = fpp::PluginHost::open();
    for (const fpp::PluginInfo& plugin : host.plugins())
      std::printf("plugin: %s %s (%s)\n", plugin.name.c_str(), plugin.in_process ? "in-process" : "isolated",
                  plugin.path.c_str());
    for (const fpp::LoadProblem& problem : host.problems())
      std::printf("not loaded: %s\n", problem.message.c_str());

    fpp::RunRequest request;
    request.image = fps::Image::load(argv[1]);
    request.mask = fps::Image::load(argv[2]);
    for (int i = 5; i < argc; ++i) {
      const std::string pair = argv[i];
      const size_t equals = pair.find('=');
      if (equals == std::string::npos) {
        std::fprintf(stderr, "error: parameter '%s' is not key=value\n", argv[i]);
        return 2;
      }
      request.parameters[pair.substr(0, equals)] = pair.substr(equals + 1);
    }
    int steps = 0;
    request.progress = [&steps](const fpp::Progress&) { ++steps; return true; };
    const fpp::RunResult result = host.run(argv[4], request);
    std::printf("ran %s: %zu image(s), %s, %d progress report(s)\n", argv[4], result.images.size(),
                result.in_process ? "in-process" : "isolated", steps);
    if (result.images.empty()) {
      std::printf("FAIL: no result\n");
      return 1;
    }
    for (size_t i = 0; i < result.images.size(); ++i) {
      const std::string path = std::string(argv[3]) + "/result-" + std::to_string(i + 1) + ".png";
      result.images[i].save(path);
      const size_t changed = changed_pixels(request.image, result.images[i]);
      std::printf("result %zu: %ux%u, %zu pixels changed, saved %s\n", i + 1, result.images[i].width,
                  result.images[i].height, changed, path.c_str());
      if (changed == 0) {
        std::printf("FAIL: result %zu is the input image\n", i + 1);
        return 1;
      }
    }
    std::printf("all checks passed\n");
    return 0;
  } catch (const fpp::PluginError& error) {
    std::fprintf(stderr, "plugin error (%s): %s\n", fpp::PluginError::failure_name(error.failure()), error.what());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
  }
  return 1;
}
