#include "core/files/content_hash.h"

#include <xxhash.h>

#include <cstdio>

namespace flashps {

struct ContentHasher::State {
  XXH3_state_t* xxh = XXH3_createState();
  ~State() { XXH3_freeState(xxh); }
};

ContentHasher::ContentHasher() : state_(std::make_unique<State>()) {
  XXH3_128bits_reset(state_->xxh);
}

ContentHasher::~ContentHasher() = default;

ContentHasher& ContentHasher::update(const void* bytes, size_t size) {
  XXH3_128bits_update(state_->xxh, bytes, size);
  return *this;
}

ContentHasher& ContentHasher::update(const std::string& text) {
  const uint64_t size = text.size();  // length prefix: "ab"+"c" and "a"+"bc" differ
  update(&size, sizeof(size));
  return update(text.data(), text.size());
}

std::string ContentHasher::hex() const {
  XXH128_hash_t hash = XXH3_128bits_digest(state_->xxh);
  char text[33];
  std::snprintf(text, sizeof(text), "%016llx%016llx", static_cast<unsigned long long>(hash.high64),
                static_cast<unsigned long long>(hash.low64));
  return text;
}

}  // namespace flashps
