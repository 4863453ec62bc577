#include "load_media.h"

#include <array>
#include <cstdint>

namespace load_client {

// ---------------------------------------------------------------- base64, PNG

std::string base64_encode(const std::string& bytes) {
  static const char* table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    out += table[v >> 18];
    out += table[(v >> 12) & 63];
    out += table[(v >> 6) & 63];
    out += table[v & 63];
  }
  if (i + 1 == bytes.size()) {
    const uint32_t v = uint8_t(bytes[i]) << 16;
    out += table[v >> 18];
    out += table[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == bytes.size()) {
    const uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8);
    out += table[v >> 18];
    out += table[(v >> 12) & 63];
    out += table[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

std::optional<std::string> base64_decode(const std::string& text) {
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (const char c : text) {
    int v;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '+') v = 62;
    else if (c == '/') v = 63;
    else if (c == '=') break;
    else return std::nullopt;
    buffer = (buffer << 6) | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += char((buffer >> bits) & 0xff);
    }
  }
  return out;
}

bool is_png(const std::string& bytes) { return bytes.size() > 8 && bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0; }
bool is_jpeg(const std::string& bytes) { return bytes.size() > 3 && uint8_t(bytes[0]) == 0xff && uint8_t(bytes[1]) == 0xd8; }

// Width and height of a PNG (IHDR) or JPEG (the first SOFn marker).
std::optional<std::pair<int, int>> image_size(const std::string& bytes) {
  auto be16 = [&](size_t at) { return (uint8_t(bytes[at]) << 8) | uint8_t(bytes[at + 1]); };
  auto be32 = [&](size_t at) { return (uint32_t(be16(at)) << 16) | uint32_t(be16(at + 2)); };
  if (is_png(bytes) && bytes.size() >= 24) return std::make_pair(int(be32(16)), int(be32(20)));
  if (!is_jpeg(bytes)) return std::nullopt;
  size_t at = 2;
  while (at + 9 < bytes.size()) {
    if (uint8_t(bytes[at]) != 0xff) return std::nullopt;
    const int marker = uint8_t(bytes[at + 1]);
    if (marker == 0xff) { ++at; continue; }
    if (marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc)
      return std::make_pair(be16(at + 7), be16(at + 5));
    at += 2 + size_t(be16(at + 2));
  }
  return std::nullopt;
}

static uint32_t crc32(const std::string& bytes) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  uint32_t c = 0xffffffffu;
  for (const char b : bytes) c = table[(c ^ uint8_t(b)) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

static void put32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += char((v >> shift) & 0xff);
}

// An RGBA PNG, opaque black, with a fully transparent rectangle (the OpenAI "edit here" region):
// the middle half of the image. Deflate with stored blocks: no zlib needed.
std::string alpha_mask_png(int width, int height) {
  std::string raw;
  raw.reserve(size_t(height) * (1 + size_t(width) * 4));
  for (int y = 0; y < height; ++y) {
    raw += '\0';  // filter: none
    for (int x = 0; x < width; ++x) {
      const bool edit = x >= width / 4 && x < width * 3 / 4 && y >= height / 4 && y < height * 3 / 4;
      raw += std::string("\0\0\0", 3);
      raw += char(edit ? 0 : 255);
    }
  }
  std::string zlib = "\x78\x01";
  for (size_t at = 0; at < raw.size() || at == 0; at += 65535) {
    const size_t length = std::min<size_t>(65535, raw.size() - at);
    const bool last = at + length >= raw.size();
    zlib += char(last ? 1 : 0);
    zlib += char(length & 0xff);
    zlib += char(length >> 8);
    zlib += char(~length & 0xff);
    zlib += char((~length >> 8) & 0xff);
    zlib.append(raw, at, length);
    if (last) break;
  }
  uint32_t a = 1, b = 0;
  for (const char c : raw) {
    a = (a + uint8_t(c)) % 65521;
    b = (b + a) % 65521;
  }
  put32(zlib, (b << 16) | a);
  auto chunk = [](std::string& out, const std::string& type, const std::string& data) {
    put32(out, uint32_t(data.size()));
    out += type + data;
    put32(out, crc32(type + data));
  };
  std::string ihdr;
  put32(ihdr, uint32_t(width));
  put32(ihdr, uint32_t(height));
  ihdr += std::string("\x08\x06\x00\x00\x00", 5);  // 8-bit RGBA
  std::string png = "\x89PNG\r\n\x1a\n";
  chunk(png, "IHDR", ihdr);
  chunk(png, "IDAT", zlib);
  chunk(png, "IEND", "");
  return png;
}


}  // namespace load_client
