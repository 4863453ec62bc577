// A `flashps` HTTP server on a tiny random model and a free loopback port, with a 64x64 picture
// and an OpenAI-convention mask (a transparent 16x16 square), for tests of POST /v1/images/edits.
#pragma once
#include <httplib.h>

#include <algorithm>

#include <flashps/flashps.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "core/image/image.h"
#include "core/image/image_encode.h"
#include "support/temp_dir.h"
#include "support/tiny_pipeline.h"

namespace flashps::test {

inline std::string png_bytes(const Image& image) {
  const std::vector<uint8_t> bytes = encode_image(image, ImageFormat::png, 1, "test image");
  return std::string(bytes.begin(), bytes.end());
}

struct OpenAiEditServer {
  TempDir dir;
  sdk::Engine engine;
  sdk::Server server;
  std::string image = png_bytes(gradient_image(64, 64));
  std::string mask = [] {
    Image mask(64, 64, 4, 255);
    for (int y = 24; y < 40; ++y)
      for (int x = 24; x < 40; ++x) mask.at(x, y, 3) = 0;
    return png_bytes(mask);
  }();

  // api_keys: written to a key file (--api-key-file); empty: a server without keys.
  explicit OpenAiEditServer(const std::vector<std::string>& api_keys = {}) {
    engine = sdk::Engine::open(tiny_model(dir), sdk::EngineOptions{});
    sdk::ServerOptions options;
    options.listen = "127.0.0.1:0";
    if (!api_keys.empty()) {
      options.api_key_file = dir.file("keys");
      std::ofstream file(options.api_key_file);
      for (const std::string& key : api_keys) file << key << "\n";
    }
    server = sdk::Server::start(engine, options);
  }
  int64_t edits_submitted() const { return engine.counters().submitted; }
  httplib::Client client() const {
    httplib::Client client("127.0.0.1", server.port());
    client.set_read_timeout(120, 0);
    return client;
  }
  // The image, the mask, a prompt, 4 steps, and `extra` fields (one of the same name replaces
  // the default: the server refuses a field sent twice).
  httplib::MultipartFormDataItems form(const httplib::MultipartFormDataItems& extra = {},
                                       const std::string& prompt = "a kite") const {
    httplib::MultipartFormDataItems items = {{"image", image, "image.png", "image/png"},
                                             {"mask", mask, "mask.png", "image/png"},
                                             {"prompt", prompt, "", ""},
                                             {"steps", "4", "", ""}};
    for (const auto& field : extra) {
      const auto same = std::find_if(items.begin(), items.end(), [&](const auto& item) { return item.name == field.name; });
      if (same != items.end()) *same = field;
      else items.push_back(field);
    }
    return items;
  }
};

}  // namespace flashps::test
