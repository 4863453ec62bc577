#include "byte_size.h"

#include <cctype>
#include <stdexcept>

namespace flashps::cli {
namespace {

bool all_digits(const std::string& text) {
  if (text.empty()) return false;
  for (const char c : text)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace

int64_t parse_byte_size(const std::string& option, const std::string& text) {
  const std::string example = " (e.g. 500M, 2G)";
  if (text.empty()) throw std::invalid_argument(option + ": give a size" + example);
  // The grammar: digits [. digits] [K|M|G]. Anything else (a sign, 0x, 1e9, inf, nan) is refused.
  size_t end = text.size();
  double scale = 1;
  switch (std::toupper(static_cast<unsigned char>(text.back()))) {
    case 'K': scale = 1e3; --end; break;
    case 'M': scale = 1e6; --end; break;
    case 'G': scale = 1e9; --end; break;
    default: break;
  }
  const std::string number = text.substr(0, end);
  const size_t point = number.find('.');
  const std::string whole = number.substr(0, point);
  const std::string fraction = point == std::string::npos ? "" : number.substr(point + 1);
  if (!all_digits(whole) || (point != std::string::npos && !all_digits(fraction))) {
    if (text.front() == '-') throw std::invalid_argument(option + " must not be negative (" + text + ")");
    throw std::invalid_argument(option + ": '" + text + "' is not a size" + example);
  }
  const double bytes = std::stod(number) * scale;
  // 2^63 is exactly representable; anything at or above it does not fit an int64_t.
  if (!(bytes < 9223372036854775808.0))
    throw std::invalid_argument(option + ": '" + text + "' is too large (at most 9.2 exabytes)");
  return static_cast<int64_t>(bytes);
}

}  // namespace flashps::cli
