// --max-size values, checked strictly (a bare std::stod would take hex, exponents, inf and nan).
#pragma once
#include <cstdint>
#include <string>

namespace flashps::cli {

// A decimal number of bytes with an optional unit K, M or G (powers of 1000), e.g. "500M",
// "1.5G", "1024". Refuses negative values, hex, exponents, inf/nan and sizes past int64_t,
// naming `option` and the value.
int64_t parse_byte_size(const std::string& option, const std::string& text);

}  // namespace flashps::cli
