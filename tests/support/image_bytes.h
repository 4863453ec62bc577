// Image files built byte by byte for the image tests: PNG chunks with hand-computed CRCs, stored
// (uncompressed) deflate blocks, small embedded JPEGs, and a temporary folder to write them in.
#pragma once
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/image/image.h"

namespace flashps::test {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

struct TemporaryFolder {
  fs::path path;
  TemporaryFolder() {
    std::random_device entropy;
    path = fs::temp_directory_path() / ("flashps_image_test_" + std::to_string(entropy()));
    fs::create_directories(path);
  }
  ~TemporaryFolder() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
  size_t entry_count() const { return static_cast<size_t>(std::distance(fs::directory_iterator(path), {})); }
};

inline void write_bytes(const std::string& path, const Bytes& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

inline Bytes read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

inline void append_u32(Bytes& out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(value >> shift));
}

inline uint32_t crc32(const uint8_t* data, size_t size) {
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i) {
    crc ^= data[i];
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return crc ^ 0xFFFFFFFFu;
}

inline void append_chunk(Bytes& png, const char* type, const Bytes& data) {
  append_u32(png, static_cast<uint32_t>(data.size()));
  const size_t start = png.size();
  png.insert(png.end(), type, type + 4);
  png.insert(png.end(), data.begin(), data.end());
  append_u32(png, crc32(&png[start], png.size() - start));
}

// zlib stream of stored (uncompressed) deflate blocks.
inline Bytes zlib_stored(const Bytes& raw) {
  Bytes out = {0x78, 0x01};
  size_t position = 0;
  do {
    const size_t length = std::min<size_t>(65535, raw.size() - position);
    out.push_back(position + length == raw.size() ? 1 : 0);
    out.push_back(length & 0xFF);
    out.push_back(length >> 8);
    out.push_back(~length & 0xFF);
    out.push_back((~length >> 8) & 0xFF);
    out.insert(out.end(), raw.begin() + position, raw.begin() + position + length);
    position += length;
  } while (position < raw.size());
  uint32_t a = 1, b = 0;
  for (uint8_t byte : raw) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  append_u32(out, (b << 16) | a);
  return out;
}

// `scanlines` already holds each row's filter byte (0 = none). `extra` chunks go before IDAT.
inline Bytes make_png(uint32_t width, uint32_t height, uint8_t bit_depth, uint8_t color_type, const Bytes& scanlines,
               const std::vector<std::pair<const char*, Bytes>>& extra = {}, uint8_t interlace = 0) {
  Bytes png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  Bytes header;
  append_u32(header, width);
  append_u32(header, height);
  header.insert(header.end(), {bit_depth, color_type, 0, 0, interlace});
  append_chunk(png, "IHDR", header);
  for (const auto& [type, data] : extra) append_chunk(png, type, data);
  append_chunk(png, "IDAT", zlib_stored(scanlines));
  append_chunk(png, "IEND", {});
  return png;
}

inline Image decode(const Bytes& bytes, const std::string& name = "memory.png") {
  return flashps::decode_image(bytes.data(), bytes.size(), name);
}

inline Image gradient(int width, int height, int channels) {
  Image image(width, height, channels);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      for (int c = 0; c < channels; ++c) image.at(x, y, c) = static_cast<uint8_t>((x * 4 + y * 3 + c * 20) % 256);
    }
  }
  return image;
}

inline Bytes from_hex(const std::string& hex) {
  Bytes bytes;
  for (size_t i = 0; i < hex.size(); i += 2) bytes.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return bytes;
}

// Embedded because no SDK function writes CMYK: an 8x8 Adobe (inverted) CMYK JPEG whose left half
// is 50% black ink only and right half is full cyan.
inline Bytes cmyk_jpeg() {
  return from_hex(
      "ffd8ffee000e41646f626500640000000000ffdb00430001010101010101010101010101010101010101010101010101"
      "010101010101010101010101010101010101010101010101010101010101010101010101010101ffc000140800080008"
      "044311004d11005911004b1100ffc4001600010101000000000000000000000000000a0309ffc4001c10000103050000"
      "0000000000000000000000090a48498788c7c8ffda000e0443004d0059004b00003f009be729759b3c8e3f81fc1bf886"
      "728ac9edc3ffd9");
}

// An 8x8 gray progressive JPEG (6 scans, libjpeg's simple progression) of the ramp x * 30.
inline Bytes progressive_jpeg() {
  return from_hex(
      "ffd8ffe000104a46494600010100000100010000ffdb0043000302020302020303030304030304050805050404050a07"
      "0706080c0a0c0c0b0a0b0b0d0e12100d0e110e0b0b1016101113141515150c0f171816141812141514ffc2000b080008"
      "000801011100ffc40014000100000000000000000000000000000005ffda000801010000000103ffc400151001010000"
      "0000000000000000000000000007ffda00080101000105029dbfffc40015100101000000000000000000000000000000"
      "03ffda0008010100063f029bffc40015100101000000000000000000000000000000c1ffda0008010100013f218bffda"
      "0008010100000010ff00ffc40014100100000000000000000000000000000000ffda0008010100013f106fffd9");
}


}  // namespace flashps::test
