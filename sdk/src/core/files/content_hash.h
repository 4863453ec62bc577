// 128-bit content hashes (XXH3) as hex strings: template identities, model fingerprints.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

namespace flashps {

class ContentHasher {
 public:
  ContentHasher();
  ~ContentHasher();
  ContentHasher& update(const void* bytes, size_t size);
  ContentHasher& update(const std::string& text);
  std::string hex() const;  // 32 hex digits

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace flashps
