// PNG / JPEG reading and writing. Unusual PNG layouts are built byte by byte (stored deflate
// blocks, hand-computed CRCs; support/image_bytes.h) so the tests need nothing beyond the SDK.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/diagnostics/error.h"
#include "core/image/image.h"
#include "support/image_bytes.h"

using flashps::Image;
using Catch::Contains;  // the string matcher (v2 and, through support/catch2_v3, v3)
using namespace flashps::test;

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

  // 64 million RGBA pixels are within the default budget, but a 60-byte file claiming them must fail
  // fast as truncated instead of first allocating 256 MB.
  // Interlaced images need their whole buffer up front: the deflate bound (1032:1) catches those.
  const auto start = std::chrono::steady_clock::now();
  for (uint8_t interlace : {0, 1}) {
    CHECK_THROWS_WITH(decode(make_png(8000, 8000, 8, 6, {0, 1, 2, 3, 4}, {}, interlace), "bomb.png"),
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
