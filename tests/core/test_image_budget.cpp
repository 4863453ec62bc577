// Hostile image headers: decompression bombs and headers that claim more than their data. Each is
// generated here, decoded in a child process, and must fail with its exact message, fast and in
// little memory (generous bounds: a bomb that got through would cost seconds and gigabytes).
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/diagnostics/error.h"
#include "core/image/image.h"
#include "support/child_usage.h"
#include "support/image_bytes.h"

using flashps::Image;
using flashps::ImageBudget;
using Catch::Contains;  // the string matcher (v2 and, through support/catch2_v3, v3)
using namespace flashps::test;

namespace {

constexpr double kGenerousSeconds = 5.0;
constexpr long kGenerousGrowthKb = 256 * 1024;

// A small baseline JPEG encoded by the SDK, with its SOF's declared size replaced.
Bytes jpeg_claiming(int encoded_side, uint16_t claimed_width, uint16_t claimed_height) {
  TemporaryFolder folder;
  flashps::write_image(folder.file("small.jpg"), gradient(encoded_side, encoded_side, 3));
  Bytes jpeg = read_bytes(folder.file("small.jpg"));
  size_t at = 2;
  while (at + 9 < jpeg.size() && !(jpeg[at] == 0xFF && jpeg[at + 1] >= 0xC0 && jpeg[at + 1] <= 0xC2)) {
    at += 2 + (size_t{jpeg[at + 2]} << 8 | jpeg[at + 3]);  // skip this marker segment
  }
  REQUIRE(at + 9 < jpeg.size());
  // SOF: marker(2) length(2) precision(1) height(2) width(2).
  jpeg[at + 5] = static_cast<uint8_t>(claimed_height >> 8);
  jpeg[at + 6] = static_cast<uint8_t>(claimed_height);
  jpeg[at + 7] = static_cast<uint8_t>(claimed_width >> 8);
  jpeg[at + 8] = static_cast<uint8_t>(claimed_width);
  return jpeg;
}

// Decodes in a child and checks the exact error and the bounds.
void check_refused_cheaply(const Bytes& bytes, const std::string& name, const std::string& expected_error,
                           const ImageBudget& budget = ImageBudget()) {
  const ChildUsage usage = run_in_child([&] { flashps::decode_image(bytes.data(), bytes.size(), name, budget); });
  INFO(name << ": " << usage.seconds << " s, peak RSS +" << usage.peak_growth_kb << " KiB");
  REQUIRE(usage.exited);
  CHECK(usage.error == expected_error);
  CHECK(usage.seconds < kGenerousSeconds);
  CHECK(usage.peak_growth_kb < kGenerousGrowthKb);
}

struct EnvironmentVariable {
  std::string name;
  EnvironmentVariable(std::string name_, const char* value) : name(std::move(name_)) {
    ::setenv(name.c_str(), value, 1);
  }
  ~EnvironmentVariable() { ::unsetenv(name.c_str()); }
};

}  // namespace

TEST_CASE("A 69-byte PNG claiming 2147483647x1 fails at once, 8- and 16-bit RGBA", "[image][budget]") {
  for (const uint8_t bit_depth : {8, 16}) {
    const Bytes png = make_png(0x7FFFFFFF, 1, bit_depth, 6, {0});
    REQUIRE(png.size() == 69);
    const std::string name = "bomb" + std::to_string(bit_depth) + ".png";
    check_refused_cheaply(png, name,
                          name + ": image dimensions 2147483647x1 exceed the limit of 16384 pixels per side");
  }
}

TEST_CASE("A small JPEG whose SOF claims 16000x6000 is refused by the pixel budget", "[image][budget]") {
  const Bytes jpeg = jpeg_claiming(16, 16000, 6000);
  REQUIRE(jpeg.size() < 2048);
  check_refused_cheaply(jpeg, "bomb.jpg",
                        "bomb.jpg: image dimensions 16000x6000 exceed the limit of 64000000 pixels "
                        "(FLASHPS_MAX_IMAGE_PIXELS raises it)");
  // With the budget raised, its data runs out long before its rows: truncated, still cheap.
  ImageBudget raised;
  raised.max_pixels = 100'000'000;
  check_refused_cheaply(jpeg, "bomb.jpg", "bomb.jpg: truncated JPEG data", raised);
}

TEST_CASE("A JPEG whose SOF claims more than its data holds is truncated, not grey", "[image][budget]") {
  // 512x512 declared over 128x128 of data: libjpeg alone pads with grey and only warns.
  check_refused_cheaply(jpeg_claiming(128, 512, 512), "sof.jpg", "sof.jpg: truncated JPEG data");
  // The same file with its real size decodes.
  const Bytes honest = jpeg_claiming(128, 128, 128);
  CHECK(flashps::decode_image(honest.data(), honest.size(), "honest.jpg").width == 128);
}

TEST_CASE("The pixel and byte budgets are configurable, by field and by environment", "[image][budget]") {
  const Bytes png = make_png(100, 100, 8, 6, Bytes(100 * 401, 0));
  ImageBudget small;
  small.max_pixels = 5000;
  CHECK_THROWS_WITH(flashps::decode_image(png.data(), png.size(), "big.png", small),
                    "big.png: image dimensions 100x100 exceed the limit of 5000 pixels "
                    "(FLASHPS_MAX_IMAGE_PIXELS raises it)");
  small = ImageBudget();
  small.max_bytes = 20'000;  // 40,000 decoded bytes
  CHECK_THROWS_WITH(flashps::decode_image(png.data(), png.size(), "big.png", small),
                    "big.png: decoding the 100x100 image needs 40802 bytes, over the limit of 20000 bytes "
                    "(FLASHPS_MAX_IMAGE_BYTES raises it)");
  // A progressive JPEG also counts the coefficients libjpeg keeps: 8x8 gray = 64 + 128 bytes.
  const Bytes progressive = progressive_jpeg();
  small.max_bytes = 150;
  CHECK_THROWS_WITH(flashps::decode_image(progressive.data(), progressive.size(), "p.jpg", small),
                    Contains("p.jpg: decoding the 8x8 image needs"));
  small.max_bytes = 192;
  CHECK(flashps::decode_image(progressive.data(), progressive.size(), "p.jpg", small).width == 8);
  CHECK(decode(png, "default.png").width == 100);

  CHECK(flashps::image_budget().max_pixels == flashps::kMaxImagePixels);
  CHECK(flashps::image_budget().max_bytes == flashps::kMaxImageBytes);
  {
    EnvironmentVariable pixels("FLASHPS_MAX_IMAGE_PIXELS", "5000");
    CHECK_THROWS_WITH(decode(png, "env.png"), Contains("env.png: image dimensions 100x100 exceed the limit of 5000"));
  }
  {
    EnvironmentVariable bytes("FLASHPS_MAX_IMAGE_BYTES", "20000");
    CHECK_THROWS_WITH(decode(png, "env.png"), Contains("env.png: decoding the 100x100 image needs"));
  }
  for (const char* bad : {"abc", "-5", "0", "12x", "99999999999999999999999"}) {
    EnvironmentVariable pixels("FLASHPS_MAX_IMAGE_PIXELS", bad);
    CHECK_THROWS_AS(flashps::image_budget(), flashps::InvalidArgumentError);
    CHECK_THROWS_WITH(decode(png, "env.png"),
                      std::string("FLASHPS_MAX_IMAGE_PIXELS: expected a positive whole number, got '") + bad + "'");
  }
}

TEST_CASE("Writing to a full disk says the disk is full and names the file", "[image][budget]") {
  std::FILE* full = std::fopen("/dev/full", "wb");
  if (!full) {
    WARN("no /dev/full on this system; skipped");
    return;
  }
  const Image image = gradient(64, 64, 4);
  CHECK_THROWS_WITH(flashps::write_image_stream(full, image, flashps::ImageFormat::png, "out.png"),
                    "out.png: cannot write PNG: the disk is full (No space left on device)");
  std::clearerr(full);
  CHECK_THROWS_WITH(flashps::write_image_stream(full, image, flashps::ImageFormat::jpeg, "out.jpg"),
                    "out.jpg: cannot write JPEG: the disk is full (No space left on device)");
  std::fclose(full);
  CHECK_THROWS_AS(flashps::write_image_stream(nullptr, Image(), flashps::ImageFormat::png, "empty.png"),
                  flashps::InvalidArgumentError);
}
