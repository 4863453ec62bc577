// A C++ program that uses an installed FlashPS through the header-only wrapper
// (flashps/flashps.hpp: RAII handles, exceptions, std::function callbacks):
//   1. opens the bundled model with an activation store in OUT_DIR,
//   2. registers a template, then edits it: the edit replays the template's capture (cache hit),
//   3. cancels an edit from its progress callback (flashps::sdk::Error with FLASHPS_CANCELLED).
// Usage: cpp_consumer OUT_DIR   (OUT_DIR must exist; receives store/ and edited.png)
// Prints what it did; exits 1 on any unexpected outcome.
#include <flashps/flashps.hpp>

#include <cstdint>
#include <iostream>
#include <string>

namespace fps = flashps::sdk;

namespace {

// A 256x256 RGB template (smooth colour ramps with a checkered patch) and a mask over its centre:
// the program needs no image files.
void make_inputs(fps::Image& image, fps::Image& mask) {
  image = fps::Image(256, 256, 3);
  mask = fps::Image(256, 256, 1);
  for (uint32_t y = 0; y < 256; ++y) {
    for (uint32_t x = 0; x < 256; ++x) {
      uint8_t* pixel = image.data() + 3 * (y * 256 + x);
      const int checker = ((x / 16 + y / 16) % 2) * 40;
      pixel[0] = static_cast<uint8_t>(x * 3 / 4 + checker);
      pixel[1] = static_cast<uint8_t>(y * 3 / 4 + checker);
      pixel[2] = static_cast<uint8_t>(160 - checker);
      mask.data()[y * 256 + x] = (x >= 96 && x < 160 && y >= 96 && y < 160) ? 255 : 0;
    }
  }
}

int run(const std::string& out_dir) {
  fps::init();
  std::cout << "library: FlashPS " << fps::version() << ", ABI " << flashps_abi_version() << "\n";

  fps::EditorOptions editor_options;
  editor_options.store = fps::Store::open({out_dir + "/store"});
  fps::Editor editor = fps::Editor::open("", editor_options);  // "": the bundled model
  const fps::ModelInfo info = editor.info();
  std::cout << "model: " << info.model_dir << " (" << (info.family == fps::ModelFamily::flux ? "flux" : "stable diffusion")
            << ", " << info.native_size << " px, " << info.default_steps << " default steps)\n";

  fps::Image image, mask;
  make_inputs(image, mask);
  fps::EditOptions options;
  options.seed = 7;

  const fps::EditStats registration = editor.register_template(image, options);
  std::cout << "template registered: " << registration.total_seconds << " s, " << registration.cache_bytes
            << " bytes captured\n";

  const fps::EditResult edited = editor.edit(image, mask, options);
  std::cout << "edit: " << edited.image.width << "x" << edited.image.height << ", "
            << (edited.stats.cache_hit ? "cache hit" : "cache miss") << ", " << edited.stats.total_seconds
            << " s, mask ratio " << edited.stats.mask_ratio << ", " << edited.stats.blocks_from_cache
            << " blocks from the cache\n";
  for (const std::string& note : edited.stats.notes) std::cout << "  note: " << note << "\n";
  if (!edited.stats.cache_hit || edited.image.width != image.width || edited.image.height != image.height) {
    std::cerr << "cpp_consumer: expected a " << image.width << "x" << image.height
              << " result replaying the registered template\n";
    return 1;
  }
  edited.image.save(out_dir + "/edited.png");
  std::cout << "saved: " << out_dir << "/edited.png\n";

  fps::EditOptions cancel_options = options;
  cancel_options.steps = 4;  // a multi-step edit, cancelled at its first step
  std::string cancelled_at;
  cancel_options.progress = [&](const std::string& stage, int, int, double) {
    if (stage != "denoise") return true;
    cancelled_at = stage;
    return false;
  };
  try {
    editor.edit(image, mask, cancel_options);
    std::cerr << "cpp_consumer: the edit to cancel finished instead of throwing FLASHPS_CANCELLED\n";
    return 1;
  } catch (const fps::Error& error) {
    if (error.status() != FLASHPS_CANCELLED || cancelled_at.empty()) throw;
    std::cout << "cancel: " << error.status_name() << " from the progress callback at stage '" << cancelled_at << "'\n";
  }

  const fps::StoreStats store_stats = editor_options.store.stats();
  std::cout << "store: " << editor_options.store.directory() << ", " << store_stats.captures << " capture(s), "
            << store_stats.bytes << " bytes\n";
  if (store_stats.captures < 1) {
    std::cerr << "cpp_consumer: the registered template is not in the store\n";
    return 1;
  }
  std::cout << "cpp_consumer: all checks passed\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: cpp_consumer OUT_DIR\n";
    return 2;
  }
  try {
    return run(argv[1]);
  } catch (const fps::Error& error) {
    std::cerr << "cpp_consumer: " << error.status_name() << ": " << error.what() << "\n";
    return 1;
  }
}
