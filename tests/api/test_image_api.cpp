// flashps/common.h images: create, save, load, decode, free, and their errors by status.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "api/api_test_support.h"
#include "flashps/flashps.h"

using namespace flashps::test::api;
namespace fs = std::filesystem;

TEST_CASE("images: create, save as PNG, load and decode give the same pixels; free zeroes", "[api]") {
  flashps::test::TempDir dir;
  flashps_image image{};
  REQUIRE(flashps_image_create(5, 3, 3, &image) == FLASHPS_OK);
  CHECK(image.width == 5);
  CHECK(image.height == 3);
  CHECK(image.channels == 3);
  bool all_zero = true;
  for (size_t i = 0; i < 5 * 3 * 3; ++i) all_zero &= image.pixels[i] == 0;
  CHECK(all_zero);
  for (size_t i = 0; i < 5 * 3 * 3; ++i) image.pixels[i] = static_cast<uint8_t>(i * 7);

  const std::string path = dir.file("image.png");
  REQUIRE(flashps_image_save(path.c_str(), &image) == FLASHPS_OK);
  flashps_image loaded{};
  REQUIRE(flashps_image_load(path.c_str(), &loaded) == FLASHPS_OK);
  CHECK(loaded.width == 5);
  CHECK(loaded.channels == 3);
  CHECK(std::equal(image.pixels, image.pixels + 45, loaded.pixels));

  std::ifstream file(path, std::ios::binary);
  const std::vector<char> bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  flashps_image decoded{};
  REQUIRE(flashps_image_decode(bytes.data(), bytes.size(), "in memory", &decoded) == FLASHPS_OK);
  CHECK(std::equal(image.pixels, image.pixels + 45, decoded.pixels));

  // JPEG by extension (lossy: only the size is compared).
  const std::string jpeg = dir.file("image.jpg");
  REQUIRE(flashps_image_save(jpeg.c_str(), &image) == FLASHPS_OK);
  flashps_image from_jpeg{};
  REQUIRE(flashps_image_load(jpeg.c_str(), &from_jpeg) == FLASHPS_OK);
  CHECK(from_jpeg.width == 5);

  for (flashps_image* owned : {&image, &loaded, &decoded, &from_jpeg}) {
    flashps_image_free(owned);
    CHECK(owned->pixels == nullptr);
    CHECK(owned->width == 0);
    CHECK(owned->channels == 0);
  }
  flashps_image_free(&image);  // twice: fine
  flashps_image_free(nullptr);
}

TEST_CASE("image errors: NULLs and bad sizes invalid, missing files not found, garbage corrupt, "
          "unwritable paths I/O errors", "[api]") {
  flashps::test::TempDir dir;
  flashps_image image{};
  CHECK(flashps_image_load(nullptr, &image) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_image_load("x.png", nullptr) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_image_load(dir.file("missing.png").c_str(), &image) == FLASHPS_NOT_FOUND);
  CHECK_THAT(last_error(), Catch::Contains("missing.png: file not found"));

  const std::string garbage = dir.file("garbage.png");
  std::ofstream(garbage) << "definitely not an image";
  CHECK(flashps_image_load(garbage.c_str(), &image) == FLASHPS_CORRUPT_DATA);
  CHECK_THAT(last_error(), Catch::Contains("garbage.png: not a PNG or JPEG image"));
  const char truncated_png[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
  CHECK(flashps_image_decode(truncated_png, sizeof truncated_png - 1, "truncated", &image) == FLASHPS_CORRUPT_DATA);
  CHECK_THAT(last_error(), Catch::Contains("truncated"));
  CHECK(flashps_image_decode(nullptr, 4, "bytes", &image) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_image_decode(truncated_png, 4, "bytes", nullptr) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_image_decode(truncated_png, 0, nullptr, &image) == FLASHPS_CORRUPT_DATA);  // empty data
  CHECK(image.pixels == nullptr);

  CHECK(flashps_image_create(0, 4, 3, &image) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_image_create(4, 4, 2, &image) == FLASHPS_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("channels is 2"));
  CHECK(flashps_image_create(100000, 4, 1, &image) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_image_create(4, 4, 1, nullptr) == FLASHPS_INVALID_ARGUMENT);

  REQUIRE(flashps_image_create(4, 4, 1, &image) == FLASHPS_OK);
  CHECK(flashps_image_save(nullptr, &image) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_image_save(dir.file("a.png").c_str(), nullptr) == FLASHPS_INVALID_ARGUMENT);
  CHECK(flashps_image_save(dir.file("a.bmp").c_str(), &image) == FLASHPS_UNSUPPORTED);
  CHECK_THAT(last_error(), Catch::Contains("unsupported image extension '.bmp'"));
  CHECK(flashps_image_save(dir.file("no/such/folder/a.png").c_str(), &image) == FLASHPS_IO_ERROR);
  CHECK_THAT(last_error(), Catch::Contains("no/such/folder/a.png"));
  flashps_image bad = image;
  bad.channels = 5;
  CHECK(flashps_image_save(dir.file("b.png").c_str(), &bad) == FLASHPS_INVALID_ARGUMENT);
  CHECK_FALSE(fs::exists(dir.file("b.png")));
  flashps_image_free(&image);
}
