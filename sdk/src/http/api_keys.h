// API keys for `Authorization: Bearer <key>`: read from a file (one per line, '#' comments), never
// logged, compared in constant time so response timing does not reveal how much of a guess matched.
#pragma once
#include <string>
#include <vector>

namespace flashps::http {

class ApiKeys {
 public:
  ApiKeys() = default;
  // Throws sdk::Error (NOT_FOUND, IO_ERROR, INVALID_ARGUMENT) naming the file: unreadable, no
  // key, or a key shorter than 16 characters (guessable).
  static ApiKeys load(const std::string& path);
  static ApiKeys of(std::vector<std::string> keys);  // tests

  bool empty() const { return keys_.empty(); }
  // The header's value, e.g. "Bearer sk-..."; true when it carries one of the keys.
  bool accepts(const std::string& authorization) const;

 private:
  std::vector<std::string> keys_;
};

// Compares every byte of the longer input whatever matched before (no early exit).
bool constant_time_equal(const std::string& a, const std::string& b);

}  // namespace flashps::http
