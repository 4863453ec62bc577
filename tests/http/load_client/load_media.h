// Inputs and answers: base64, a PNG's size, and the transparent-region mask OpenAI's API takes.
#pragma once
#include <optional>
#include <string>
#include <utility>

namespace load_client {

std::string base64_encode(const std::string& bytes);
std::optional<std::string> base64_decode(const std::string& text);
// Starts with the PNG signature.
bool is_png(const std::string& bytes);
bool is_jpeg(const std::string& bytes);
// Width and height from a PNG's IHDR (nullopt if it is not a PNG).
std::optional<std::pair<int, int>> image_size(const std::string& bytes);
// RGBA PNG, opaque except a transparent rectangle in the middle (the region to edit).
std::string alpha_mask_png(int width, int height);

}  // namespace load_client
