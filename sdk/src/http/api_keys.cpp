#include "http/api_keys.h"

#include <flashps/flashps.hpp>

#include <cctype>
#include <fstream>
#include <sys/stat.h>

namespace flashps::http {

bool constant_time_equal(const std::string& a, const std::string& b) {
  const size_t length = a.size() > b.size() ? a.size() : b.size();
  unsigned difference = a.size() == b.size() ? 0u : 1u;
  for (size_t i = 0; i < length; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    difference |= static_cast<unsigned>(x ^ y);
  }
  return difference == 0;
}

ApiKeys ApiKeys::load(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    throw sdk::Error(FLASHPS_NOT_FOUND, path + ": API key file not found");
  std::ifstream file(path);
  if (!file) throw sdk::Error(FLASHPS_IO_ERROR, path + ": cannot read the API key file");
  std::vector<std::string> keys;
  int line_number = 0;
  for (std::string line; std::getline(file, line);) {
    ++line_number;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    line = line.substr(start);
    if (line.size() < 16)
      throw sdk::Error(FLASHPS_INVALID_ARGUMENT, path + ":" + std::to_string(line_number) +
                                                     ": an API key must have at least 16 characters");
    keys.push_back(line);
  }
  if (keys.empty()) throw sdk::Error(FLASHPS_INVALID_ARGUMENT, path + ": the API key file holds no key");
  return of(std::move(keys));
}

ApiKeys ApiKeys::of(std::vector<std::string> keys) {
  ApiKeys result;
  result.keys_ = std::move(keys);
  return result;
}

bool ApiKeys::accepts(const std::string& authorization) const {
  // The scheme is case-insensitive (RFC 9110); the key is not.
  static const std::string kScheme = "bearer ";
  if (authorization.size() <= kScheme.size()) return false;
  for (size_t i = 0; i < kScheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return false;
  const std::string given = authorization.substr(kScheme.size());
  bool accepted = false;
  for (const std::string& key : keys_) accepted |= constant_time_equal(given, key);  // all keys, always
  return accepted;
}

}  // namespace flashps::http
