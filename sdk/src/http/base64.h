// Base64 (RFC 4648, standard alphabet) for images inside JSON bodies and b64_json answers.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace flashps::http {

std::string base64_encode(std::string_view bytes);
// Appends the encoding to `text` without a temporary: answers carry megabytes of it.
void base64_append(std::string& text, std::string_view bytes);
constexpr size_t base64_encoded_size(size_t bytes) { return (bytes + 2) / 3 * 4; }
// Strict: padding optional, whitespace (line breaks of wrapped encoders) skipped, any other
// character outside the alphabet gives nullopt. A "data:<type>;base64," prefix is accepted.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace flashps::http
