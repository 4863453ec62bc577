// PNG / JPEG reading and writing. Unusual PNG layouts are built byte by byte (stored deflate
// blocks, hand-computed CRCs) so the tests need nothing beyond the SDK.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/image.h"

namespace fs = std::filesystem;
using flashps::Image;
using Bytes = std::vector<uint8_t>;
using Catch::Matchers::Contains;

namespace {

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

void write_bytes(const std::string& path, const Bytes& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

Bytes read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

void append_u32(Bytes& out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(value >> shift));
}

uint32_t crc32(const uint8_t* data, size_t size) {
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i) {
    crc ^= data[i];
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return crc ^ 0xFFFFFFFFu;
}

void append_chunk(Bytes& png, const char* type, const Bytes& data) {
  append_u32(png, static_cast<uint32_t>(data.size()));
  const size_t start = png.size();
  png.insert(png.end(), type, type + 4);
  png.insert(png.end(), data.begin(), data.end());
  append_u32(png, crc32(&png[start], png.size() - start));
}

// zlib stream of stored (uncompressed) deflate blocks.
Bytes zlib_stored(const Bytes& raw) {
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
Bytes make_png(uint32_t width, uint32_t height, uint8_t bit_depth, uint8_t color_type, const Bytes& scanlines,
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

Image decode(const Bytes& bytes, const std::string& name = "memory.png") {
  return flashps::decode_image(bytes.data(), bytes.size(), name);
}

Image gradient(int width, int height, int channels) {
  Image image(width, height, channels);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      for (int c = 0; c < channels; ++c) image.at(x, y, c) = static_cast<uint8_t>((x * 4 + y * 3 + c * 20) % 256);
    }
  }
  return image;
}

Bytes from_hex(const std::string& hex) {
  Bytes bytes;
  for (size_t i = 0; i < hex.size(); i += 2) bytes.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return bytes;
}

// Embedded because no SDK function writes CMYK: an 8x8 Adobe (inverted) CMYK JPEG whose left half
// is 50% black ink only and right half is full cyan.
Bytes cmyk_jpeg() {
  return from_hex(
      "ffd8ffee000e41646f626500640000000000ffdb00430001010101010101010101010101010101010101010101010101"
      "010101010101010101010101010101010101010101010101010101010101010101010101010101ffc000140800080008"
      "044311004d11005911004b1100ffc4001600010101000000000000000000000000000a0309ffc4001c10000103050000"
      "0000000000000000000000090a48498788c7c8ffda000e0443004d0059004b00003f009be729759b3c8e3f81fc1bf886"
      "728ac9edc3ffd9");
}

// An 8x8 gray progressive JPEG (6 scans, libjpeg's simple progression) of the ramp x * 30.
Bytes progressive_jpeg() {
  return from_hex(
      "ffd8ffe000104a46494600010100000100010000ffdb0043000302020302020303030304030304050805050404050a07"
      "0706080c0a0c0c0b0a0b0b0d0e12100d0e110e0b0b1016101113141515150c0f171816141812141514ffc2000b080008"
      "000801011100ffc40014000100000000000000000000000000000005ffda000801010000000103ffc400151001010000"
      "0000000000000000000000000007ffda00080101000105029dbfffc40015100101000000000000000000000000000000"
      "03ffda0008010100063f029bffc40015100101000000000000000000000000000000c1ffda0008010100013f218bffda"
      "0008010100000010ff00ffc40014100100000000000000000000000000000000ffda0008010100013f106fffd9");
}

}  // namespace

TEST_CASE("PNG round trips are exact for gray, RGB and RGBA", "[image]") {
  TemporaryFolder folder;
  for (int channels : {1, 3, 4}) {
    const Image original = gradient(17, 9, channels);
    const std::string path = folder.file("round_trip_" + std::to_string(channels) + ".png");
    flashps::write_image(path, original);
    const Image loaded = flashps::read_image(path);
    CHECK(loaded.width == 17);
    CHECK(loaded.height == 9);
    CHECK(loaded.channels == channels);
    CHECK(loaded.pixels == original.pixels);
  }
  CHECK(folder.entry_count() == 3);  // no temporary files left behind
}

TEST_CASE("JPEG round trips are close; gray stays gray and alpha is dropped", "[image]") {
  TemporaryFolder folder;
  for (int channels : {1, 3, 4}) {
    const Image original = gradient(32, 24, channels);
    const std::string path = folder.file("round_trip_" + std::to_string(channels) + ".jpeg");
    flashps::write_image(path, original);
    const Image loaded = flashps::read_image(path);
    REQUIRE(loaded.width == 32);
    REQUIRE(loaded.height == 24);
    REQUIRE(loaded.channels == (channels == 1 ? 1 : 3));
    const Image expected = channels == 4 ? flashps::to_rgb(original) : original;
    double total_error = 0;
    for (size_t i = 0; i < expected.pixels.size(); ++i) total_error += std::abs(loaded.pixels[i] - expected.pixels[i]);
    CHECK(total_error / expected.pixels.size() < 4.0);  // quality 95 on a smooth gradient
  }
}

TEST_CASE("The format comes from the magic bytes, the extension only matters for writing", "[image]") {
  TemporaryFolder folder;
  const Image original = gradient(5, 4, 3);
  flashps::write_image(folder.file("real.png"), original);
  fs::rename(folder.file("real.png"), folder.file("misnamed.jpg"));
  CHECK(flashps::read_image(folder.file("misnamed.jpg")).pixels == original.pixels);

  flashps::write_image(folder.file("upper.JPG"), original);
  CHECK(read_bytes(folder.file("upper.JPG"))[0] == 0xFF);
  CHECK_THROWS_WITH(flashps::write_image(folder.file("picture.bmp"), original),
                    Contains("picture.bmp") && Contains("unsupported image extension '.bmp'"));
  CHECK_THROWS_WITH(flashps::write_image(folder.file("no_extension"), original), Contains("unsupported image extension"));
}

TEST_CASE("Writing replaces the file atomically and refuses invalid images", "[image]") {
  TemporaryFolder folder;
  const std::string path = folder.file("out.png");
  flashps::write_image(path, gradient(4, 4, 3));
  flashps::write_image(path, Image(2, 3, 1, 200));
  const Image loaded = flashps::read_image(path);
  CHECK(loaded.width == 2);
  CHECK(loaded.pixels == Bytes(6, 200));

  Image two_channels(2, 2, 1);
  two_channels.channels = 2;
  CHECK_THROWS_WITH(flashps::write_image(path, two_channels), Contains("out.png") && Contains("channel count 2"));
  Image short_buffer(3, 3, 3);
  short_buffer.pixels.pop_back();
  CHECK_THROWS_WITH(flashps::write_image(path, short_buffer), Contains("pixel buffer holds 26 bytes, expected 27"));
  CHECK_THROWS_WITH(flashps::write_image(path, Image()), Contains("out.png"));
  CHECK(flashps::read_image(path).pixels == Bytes(6, 200));  // failed writes left it alone
  CHECK(folder.entry_count() == 1);

  const std::string unreachable = folder.file("missing_folder/out.jpg");
  CHECK_THROWS_WITH(flashps::write_image(unreachable, loaded), Contains(unreachable) && Contains("cannot create"));
}

TEST_CASE("PNG layouts are converted to 8-bit gray, RGB or RGBA", "[image]") {
  SECTION("16-bit gray is scaled with rounding") {
    // 0x01FF * 255 / 65535 = 1.99: rounds to 2 where dropping the low byte would give 1.
    const Image image = decode(make_png(4, 1, 16, 0, {0, 0x00, 0x00, 0xFF, 0xFF, 0x80, 0x80, 0x01, 0xFF}));
    CHECK(image.channels == 1);
    CHECK(image.pixels == Bytes{0, 255, 128, 2});
  }
  SECTION("16-bit RGB") {
    const Image image = decode(make_png(1, 1, 16, 2, {0, 0xFF, 0xFF, 0x00, 0x00, 0x80, 0x80}));
    CHECK(image.channels == 3);
    CHECK(image.pixels == Bytes{255, 0, 128});
  }
  SECTION("1-bit gray expands to 0 / 255") {
    const Image image = decode(make_png(8, 1, 1, 0, {0, 0b10110000}));
    CHECK(image.pixels == Bytes{255, 0, 255, 255, 0, 0, 0, 0});
  }
  SECTION("2-bit palette expands to RGB, and to RGBA with tRNS") {
    const Bytes palette = {255, 0, 0, 0, 255, 0, 0, 0, 255};
    const Bytes scanline = {0, 0b00011000};  // indices 0, 1, 2, 0
    const Image rgb = decode(make_png(4, 1, 2, 3, scanline, {{"PLTE", palette}}));
    CHECK(rgb.channels == 3);
    CHECK(rgb.pixels == Bytes{255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 0, 0});
    const Image rgba = decode(make_png(4, 1, 2, 3, scanline, {{"PLTE", palette}, {"tRNS", {0, 128}}}));
    CHECK(rgba.channels == 4);
    CHECK(rgba.pixels == Bytes{255, 0, 0, 0, 0, 255, 0, 128, 0, 0, 255, 255, 255, 0, 0, 0});
  }
  SECTION("gray + alpha becomes RGBA") {
    const Image image = decode(make_png(2, 1, 8, 4, {0, 10, 20, 30, 40}));
    CHECK(image.channels == 4);
    CHECK(image.pixels == Bytes{10, 10, 10, 20, 30, 30, 30, 40});
  }
  SECTION("Adam7 interlaced") {
    // 2x2 RGB: pass 1 holds (0,0), pass 6 holds (1,0), pass 7 holds row 1.
    const Bytes passes = {0, 1, 2, 3, 0, 4, 5, 6, 0, 7, 8, 9, 10, 11, 12};
    const Image image = decode(make_png(2, 2, 8, 2, passes, {}, 1));
    CHECK(image.pixels == Bytes{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  }
}

TEST_CASE("Adobe CMYK JPEGs become RGB", "[image]") {
  const Image image = decode(cmyk_jpeg(), "cmyk.jpg");
  REQUIRE(image.channels == 3);
  REQUIRE(image.width == 8);
  for (int c = 0; c < 3; ++c) CHECK(std::abs(image.at(1, 3, c) - 128) <= 6);
  CHECK(image.at(6, 3, 0) <= 6);
  CHECK(image.at(6, 3, 1) >= 249);
  CHECK(image.at(6, 3, 2) >= 249);
}

TEST_CASE("Progressive JPEGs decode, but not with hundreds of scans", "[image]") {
  const Bytes jpeg = progressive_jpeg();
  const Image image = decode(jpeg, "progressive.jpg");
  REQUIRE(image.channels == 1);
  REQUIRE(image.width == 8);
  for (int x = 0; x < 8; ++x) CHECK(std::abs(image.at(x, 5) - x * 30) <= 8);

  // Repeating the last scan (from its SOS marker to EOI) is tolerated by libjpeg, but every
  // repetition is another full pass: a cheap way to make a small file decode for minutes.
  const size_t last_scan = 0x110;
  REQUIRE(jpeg[last_scan] == 0xFF);
  REQUIRE(jpeg[last_scan + 1] == 0xDA);
  auto with_repeats = [&](int repeats) {
    Bytes bytes(jpeg.begin(), jpeg.end() - 2);
    for (int i = 0; i < repeats; ++i) bytes.insert(bytes.end(), jpeg.begin() + last_scan, jpeg.end() - 2);
    bytes.insert(bytes.end(), {0xFF, 0xD9});
    return bytes;
  };
  CHECK(decode(with_repeats(100), "repeats.jpg").pixels == image.pixels);
  CHECK_THROWS_WITH(decode(with_repeats(600), "repeats.jpg"),
                    Contains("repeats.jpg: corrupt JPEG data (more than 500 progressive scans)"));
}

TEST_CASE("to_rgb and to_gray", "[image]") {
  Image gray(2, 1, 1);
  gray.pixels = {7, 200};
  CHECK(flashps::to_rgb(gray).pixels == Bytes{7, 7, 7, 200, 200, 200});
  Image rgba(1, 1, 4);
  rgba.pixels = {1, 2, 3, 4};
  CHECK(flashps::to_rgb(rgba).pixels == Bytes{1, 2, 3});
  Image rgb(4, 1, 3);
  rgb.pixels = {255, 0, 0, 0, 255, 0, 255, 255, 255, 0, 0, 0};
  CHECK(flashps::to_gray(rgb).pixels == Bytes{77, 149, 255, 0});
  CHECK(flashps::to_gray(gray).pixels == gray.pixels);
}

TEST_CASE("Unreadable files name the file and the problem", "[image]") {
  TemporaryFolder folder;
  const std::string missing = folder.file("missing.png");
  CHECK_THROWS_WITH(flashps::read_image(missing), Contains(missing) && Contains("file not found"));
  CHECK_THROWS_WITH(flashps::read_image(folder.path.string()), Contains(folder.path.string()) && Contains("is a directory"));

  const std::string empty = folder.file("empty.png");
  write_bytes(empty, {});
  CHECK_THROWS_WITH(flashps::read_image(empty), Contains(empty) && Contains("empty file"));

  const std::string text = folder.file("notes.png");
  write_bytes(text, {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd', '\n'});
  CHECK_THROWS_WITH(flashps::read_image(text), Contains(text + ": not a PNG or JPEG image"));
  CHECK_THROWS_WITH(decode({0xFF}, "clipboard"), Contains("clipboard: not a PNG or JPEG image"));
  CHECK_THROWS_WITH(decode({}, "clipboard"), Contains("clipboard: empty data"));
}

TEST_CASE("Every truncation of a PNG or JPEG is reported as truncated", "[image]") {
  TemporaryFolder folder;
  Image original(12, 10, 3);
  std::mt19937 random(7);
  for (uint8_t& value : original.pixels) value = static_cast<uint8_t>(random());
  flashps::write_image(folder.file("full.png"), original);
  flashps::write_image(folder.file("full.jpg"), original);
  for (const auto& [name, problem] : {std::pair{"full.png", "truncated PNG data"}, {"full.jpg", "truncated JPEG data"}}) {
    const Bytes full = read_bytes(folder.file(name));
    REQUIRE(full.size() > 100);
    for (size_t length = 2; length < full.size(); ++length) {
      INFO(name << " cut to " << length << " of " << full.size() << " bytes");
      CHECK_THROWS_WITH(decode(Bytes(full.begin(), full.begin() + length), "cut.img"),
                        Contains(std::string("cut.img: ") + problem));
    }
  }
  const std::string on_disk = folder.file("half.png");
  const Bytes png = read_bytes(folder.file("full.png"));
  write_bytes(on_disk, Bytes(png.begin(), png.begin() + png.size() / 2));
  CHECK_THROWS_WITH(flashps::read_image(on_disk), Contains(on_disk + ": truncated PNG data"));
}

TEST_CASE("Corrupt data becomes an Error naming the file", "[image]") {
  Bytes png = make_png(2, 2, 8, 0, {0, 1, 2, 0, 3, 4});
  png[32] ^= 0xFF;  // last byte of the IHDR CRC
  CHECK_THROWS_WITH(decode(png, "bad_crc.png"), Contains("bad_crc.png: corrupt PNG data") && Contains("CRC"));
  CHECK_THROWS_WITH(decode(make_png(2, 2, 7, 0, {0, 1, 2, 0, 3, 4}), "depth.png"),
                    Contains("depth.png: corrupt PNG data"));
  CHECK_THROWS_WITH(decode(make_png(0, 2, 8, 0, {0, 0}), "zero.png"), Contains("zero.png: corrupt PNG data"));

  const Bytes garbage_after_start = {0xFF, 0xD8, 0xFF, 0x01, 0x00, 0x04, 0x00, 0x00, 0xFF, 0xD9};
  CHECK_THROWS_WITH(decode(garbage_after_start, "bad.jpg"), Contains("bad.jpg: corrupt JPEG data"));
  Bytes cmyk = cmyk_jpeg();
  cmyk[0x5B] = 0x09;  // SOF0 precision 8 -> 9 bits
  CHECK_THROWS_WITH(decode(cmyk, "precision.jpg"), Contains("precision.jpg: corrupt JPEG data"));
}

TEST_CASE("Absurd dimensions are refused before any pixel memory is allocated", "[image]") {
  CHECK_THROWS_WITH(decode(make_png(20000, 1, 8, 0, {0}), "wide.png"),
                    Contains("wide.png: image dimensions 20000x1 exceed the limit"));
  CHECK_THROWS_WITH(decode(make_png(12000, 12000, 8, 6, {0}), "huge.png"),
                    Contains("huge.png: image dimensions 12000x12000 exceed the limit"));
  CHECK_THROWS_WITH(decode(make_png(0x7FFFFFFF, 0x7FFFFFFF, 8, 6, {0}), "max.png"), Contains("exceed the limit"));

  // 100 million RGBA pixels are allowed, but a 60-byte file claiming them must fail fast as truncated
  // instead of first allocating 400 MB.
  // Interlaced images need their whole buffer up front: the deflate bound (1032:1) catches those.
  const auto start = std::chrono::steady_clock::now();
  for (uint8_t interlace : {0, 1}) {
    CHECK_THROWS_WITH(decode(make_png(10000, 10000, 8, 6, {0, 1, 2, 3, 4}, {}, interlace), "bomb.png"),
                      Contains("bomb.png: truncated PNG data"));
  }
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(500));

  Bytes jpeg = cmyk_jpeg();
  // SOF0 marker at 0x57, then length(2) precision(1) height(2) width(2).
  REQUIRE(jpeg[0x57] == 0xFF);
  REQUIRE(jpeg[0x58] == 0xC0);
  jpeg[0x5C] = 0x4E;  // height 0x4E20 = 20000
  jpeg[0x5D] = 0x20;
  CHECK_THROWS_WITH(decode(jpeg, "tall.jpg"), Contains("tall.jpg: image dimensions 8x20000 exceed the limit"));
}
