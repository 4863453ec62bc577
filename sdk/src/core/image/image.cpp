// PNG (libpng) and JPEG (libjpeg-turbo) reading and writing.
//
// Both libraries report errors by calling a handler that must not return; we longjmp back to a
// setjmp in a small "step" function. A longjmp must not skip a C++ destructor, so every step
// function holds only plain locals, and all C++ objects (vectors, strings, the library handles'
// RAII owners) belong to its caller, which turns the failure into a flashps::Error.
#include "core/image/image.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

// jpeglib.h needs FILE and size_t declared first.
#include <jerror.h>
#include <jpeglib.h>
#include <png.h>

#include "core/diagnostics/error.h"
#include "core/image/image_encode.h"

namespace flashps {
namespace {

constexpr uint8_t kPngSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
constexpr uint8_t kJpegSignature[3] = {0xFF, 0xD8, 0xFF};
constexpr int kJpegQuality = 95;
constexpr uint64_t kMaxDeflateRatio = 1032;
// A progressive JPEG may carry thousands of tiny scans, each a full pass over the image: a cheap
// denial of service. Real encoders write about ten.
constexpr int kMaxJpegScans = 500;
constexpr uintmax_t kMaxFileBytes = uintmax_t{1} << 30;
constexpr size_t kMessageLength = 200;
static_assert(kMessageLength >= JMSG_LENGTH_MAX, "libjpeg formats messages into this buffer");

std::string size_text(uint64_t width, uint64_t height) {
  return std::to_string(width) + "x" + std::to_string(height);
}

std::string byte_text(uint64_t bytes) {
  if (bytes < (1u << 20)) return std::to_string(bytes) + " bytes";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

// Called with the header's declared size, before the decoder allocates anything that scales with it.
void check_dimensions(uint64_t width, uint64_t height, const ImageBudget& budget, const std::string& name) {
  const uint64_t side = kMaxImageSide;
  if (width > side || height > side) {
    throw UnsupportedError(name + ": image dimensions " + size_text(width, height) + " exceed the limit of " +
                           std::to_string(side) + " pixels per side");
  }
  if (width * height > static_cast<uint64_t>(budget.max_pixels)) {
    throw UnsupportedError(name + ": image dimensions " + size_text(width, height) + " exceed the limit of " +
                           std::to_string(budget.max_pixels) + " pixels (FLASHPS_MAX_IMAGE_PIXELS raises it)");
  }
}

// `bytes`: the decoded pixels plus what the decoder itself holds for this size.
void check_bytes(uint64_t width, uint64_t height, uint64_t bytes, const ImageBudget& budget, const std::string& name) {
  if (bytes > static_cast<uint64_t>(budget.max_bytes)) {
    throw UnsupportedError(name + ": decoding the " + size_text(width, height) + " image needs " + byte_text(bytes) +
                           ", over the limit of " + byte_text(budget.max_bytes) +
                           " (FLASHPS_MAX_IMAGE_BYTES raises it)");
  }
}

// Positive whole number from the environment, or `fallback` when unset.
int64_t budget_from_environment(const char* variable, int64_t fallback) {
  const char* text = std::getenv(variable);
  if (!text || !*text) return fallback;
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (!std::isdigit(static_cast<unsigned char>(text[0])) || *end != '\0' || errno == ERANGE || value <= 0) {
    throw InvalidArgumentError(std::string(variable) + ": expected a positive whole number, got '" + text + "'");
  }
  return value;
}

// Why a write failed, in words a user acts on: a full disk is the common case.
std::string write_failure_text(int error_number) {
  if (error_number == ENOSPC) return "the disk is full (" + std::string(std::strerror(error_number)) + ")";
  if (error_number == EDQUOT) return "the disk quota is exhausted (" + std::string(std::strerror(error_number)) + ")";
  return std::strerror(error_number);
}

// Grows the pixel buffer one row at a time (capacity doubling, capped at the final size), so a
// tiny truncated file that declares a large image fails before the whole buffer exists.
void grow_to(std::vector<uint8_t>& pixels, size_t needed, size_t total) {
  if (needed > pixels.capacity()) {
    pixels.reserve(std::min(total, std::max(needed, 2 * pixels.capacity())));
  }
  pixels.resize(needed);
}

// ---------------------------------------------------------------- PNG decoding

// Everything the libpng callbacks touch; plain data, owned by decode_png.
struct PngSource {
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t position = 0;
  bool ran_out = false;
  char message[kMessageLength] = {};
};

void png_read_from_memory(png_structp png, png_bytep out, png_size_t length) {
  auto* source = static_cast<PngSource*>(png_get_io_ptr(png));
  if (length > source->size - source->position) {
    source->ran_out = true;
    png_error(png, "unexpected end of data");
  }
  std::memcpy(out, source->data + source->position, length);
  source->position += length;
}

void png_on_error(png_structp png, png_const_charp message) {
  auto* message_buffer = static_cast<char*>(png_get_error_ptr(png));
  std::snprintf(message_buffer, kMessageLength, "%s", message);
  png_longjmp(png, 1);
}

// Warnings describe recoverable oddities (bad ancillary CRC, unknown sRGB profile): stay quiet.
void png_on_warning(png_structp, png_const_charp) {}

struct PngReadHandles {
  png_structp png = nullptr;
  png_infop info = nullptr;
  ~PngReadHandles() { png_destroy_read_struct(&png, info ? &info : nullptr, nullptr); }
};

struct PngLayout {
  png_uint_32 width = 0, height = 0;
  int channels = 0, passes = 0;
  int stored_bits_per_pixel = 0;  // as in the file, before our transforms
};

// Reads the chunks before the image data; allocates nothing that scales with the declared size.
bool png_read_header(png_structp png, png_infop info, PngLayout& layout) {
  if (setjmp(png_jmpbuf(png))) return false;
  // Our own limit (check_dimensions) gives a clearer message than libpng's default of 1,000,000 per side.
  png_set_user_limits(png, 0x7fffffff, 0x7fffffff);
  png_read_info(png, info);
  layout.width = png_get_image_width(png, info);
  layout.height = png_get_image_height(png, info);
  layout.stored_bits_per_pixel = png_get_channels(png, info) * png_get_bit_depth(png, info);
  return true;
}

// Sets our 8-bit gray/RGB/RGBA transforms. png_read_update_info allocates the row buffers (for a
// 2^31-pixel row, gigabytes it then clears), so it runs only after check_dimensions.
bool png_read_layout(png_structp png, png_infop info, PngLayout& layout) {
  if (setjmp(png_jmpbuf(png))) return false;
  const int color_type = png_get_color_type(png, info);
  const int bit_depth = png_get_bit_depth(png, info);
  const bool has_transparency = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
  if (bit_depth == 16) png_set_scale_16(png);  // rounds, unlike png_set_strip_16
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (has_transparency) png_set_tRNS_to_alpha(png);
  // Gray with alpha has no Image layout (2 channels): widen it to RGBA.
  if (color_type == PNG_COLOR_TYPE_GRAY_ALPHA || (color_type == PNG_COLOR_TYPE_GRAY && has_transparency)) {
    png_set_gray_to_rgb(png);
  }
  layout.passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  layout.channels = png_get_channels(png, info);
  return true;
}

bool png_read_pixels(png_structp png, Image& image, int passes) {
  if (setjmp(png_jmpbuf(png))) return false;
  const size_t row_bytes = static_cast<size_t>(image.width) * static_cast<size_t>(image.channels);
  const size_t total = row_bytes * static_cast<size_t>(image.height);
  if (passes == 1) {
    for (int y = 0; y < image.height; ++y) {
      grow_to(image.pixels, row_bytes * (y + 1), total);
      png_read_row(png, image.pixels.data() + row_bytes * y, nullptr);
    }
  } else {
    // Adam7 revisits every row on each pass, so the whole buffer is needed up front.
    image.pixels.resize(total);
    for (int pass = 0; pass < passes; ++pass) {
      for (int y = 0; y < image.height; ++y) png_read_row(png, image.pixels.data() + row_bytes * y, nullptr);
    }
  }
  png_read_end(png, nullptr);  // verifies the remaining chunks, so a missing IEND counts as truncation
  return true;
}

Image decode_png(const uint8_t* bytes, size_t size, const std::string& name, const ImageBudget& budget) {
  PngSource source;
  source.data = bytes;
  source.size = size;
  PngReadHandles handles;
  handles.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, source.message, png_on_error, png_on_warning);
  if (handles.png) handles.info = png_create_info_struct(handles.png);
  if (!handles.png || !handles.info) throw Error(name + ": cannot initialise libpng (out of memory)");
  png_set_read_fn(handles.png, &source, png_read_from_memory);

  auto fail = [&]() -> CorruptDataError {
    if (source.ran_out) return CorruptDataError(name + ": truncated PNG data");
    return CorruptDataError(name + ": corrupt PNG data (" + source.message + ")");
  };
  PngLayout layout;
  if (!png_read_header(handles.png, handles.info, layout)) throw fail();
  check_dimensions(layout.width, layout.height, budget, name);
  // Deflate compresses at most 1032:1, so data too short for the declared size is cut off; say so
  // now rather than after allocating (an interlaced image needs its whole buffer up front).
  const uint64_t stored_bytes = uint64_t{layout.width} * layout.height * layout.stored_bits_per_pixel / 8;
  if ((source.size - source.position + 64) * kMaxDeflateRatio < stored_bytes) {
    throw CorruptDataError(name + ": truncated PNG data");
  }
  if (!png_read_layout(handles.png, handles.info, layout)) throw fail();
  if (layout.channels != 1 && layout.channels != 3 && layout.channels != 4) {
    throw UnsupportedError(name + ": unsupported PNG layout (" + std::to_string(layout.channels) + " channels)");
  }
  // The decoded pixels plus libpng's two rows as stored (16-bit rows are twice the output's).
  const uint64_t row_bytes = uint64_t{layout.width} * layout.stored_bits_per_pixel / 8 + 1;
  check_bytes(layout.width, layout.height,
              uint64_t{layout.width} * layout.height * static_cast<uint64_t>(layout.channels) + 2 * row_bytes, budget,
              name);
  Image image;
  image.width = static_cast<int>(layout.width);
  image.height = static_cast<int>(layout.height);
  image.channels = layout.channels;
  if (!png_read_pixels(handles.png, image, layout.passes)) throw fail();
  return image;
}

// ---------------------------------------------------------------- JPEG decoding and encoding

struct JpegErrors {
  jpeg_error_mgr base;  // first member: libjpeg hands the handlers a jpeg_error_mgr*
  std::jmp_buf jump;
  bool truncated;
  int error_number;  // errno when libjpeg gave up, for write errors
  char message[kMessageLength];
};

void jpeg_on_error(j_common_ptr codec) {
  auto* errors = reinterpret_cast<JpegErrors*>(codec->err);
  errors->error_number = errno;
  (*codec->err->format_message)(codec, errors->message);
  std::longjmp(errors->jump, 1);
}

// libjpeg only warns when the data ends before the image does (a truncated file, or a header that
// claims more than the data holds) or cannot be decoded, and fills the rest with grey: for us those
// are errors. Other warnings (extraneous bytes before a marker, ...) are common in camera files.
void jpeg_on_message(j_common_ptr codec, int level) {
  if (level >= 0) return;
  auto* errors = reinterpret_cast<JpegErrors*>(codec->err);
  switch (codec->err->msg_code) {
    case JWRN_JPEG_EOF:
    case JWRN_HIT_MARKER:
      errors->truncated = true;
      std::longjmp(errors->jump, 1);
    case JWRN_HUFF_BAD_CODE:
    case JWRN_MUST_RESYNC:
    case JWRN_NOT_SEQUENTIAL:
      (*codec->err->format_message)(codec, errors->message);
      std::longjmp(errors->jump, 1);
    default: return;
  }
}

void jpeg_on_progress(j_common_ptr codec) {
  if (!codec->is_decompressor) return;
  if (reinterpret_cast<j_decompress_ptr>(codec)->input_scan_number > kMaxJpegScans) {
    auto* errors = reinterpret_cast<JpegErrors*>(codec->err);
    std::snprintf(errors->message, kMessageLength, "more than %d progressive scans", kMaxJpegScans);
    std::longjmp(errors->jump, 1);
  }
}

void install_jpeg_errors(JpegErrors& errors) {
  jpeg_std_error(&errors.base);
  errors.base.error_exit = jpeg_on_error;
  errors.base.emit_message = jpeg_on_message;
  errors.truncated = false;
  errors.error_number = 0;
  errors.message[0] = '\0';
}

// jpeg_destroy_* is a no-op on a zeroed, never-created struct, so the owners destroy unconditionally.
struct JpegDecoder {
  jpeg_decompress_struct codec{};
  JpegErrors errors{};
  jpeg_progress_mgr progress{};
  ~JpegDecoder() { jpeg_destroy_decompress(&codec); }
};

struct JpegEncoder {
  jpeg_compress_struct codec{};
  JpegErrors errors{};
  ~JpegEncoder() { jpeg_destroy_compress(&codec); }
};

bool jpeg_read_layout(JpegDecoder& decoder, const uint8_t* bytes, size_t size) {
  if (setjmp(decoder.errors.jump)) return false;
  jpeg_create_decompress(&decoder.codec);
  decoder.progress.progress_monitor = jpeg_on_progress;
  decoder.codec.progress = &decoder.progress;
  jpeg_mem_src(&decoder.codec, bytes, static_cast<unsigned long>(size));
  jpeg_read_header(&decoder.codec, TRUE);
  switch (decoder.codec.jpeg_color_space) {
    case JCS_GRAYSCALE: decoder.codec.out_color_space = JCS_GRAYSCALE; break;
    case JCS_CMYK:
    case JCS_YCCK: decoder.codec.out_color_space = JCS_CMYK; break;  // libjpeg has no CMYK->RGB
    default: decoder.codec.out_color_space = JCS_RGB; break;
  }
  jpeg_calc_output_dimensions(&decoder.codec);
  return true;
}

// What libjpeg holds that scales with the image: a multi-scan (progressive) file keeps every
// component's DCT coefficients (64 shorts per 8x8 block) until the last scan.
uint64_t jpeg_working_bytes(const jpeg_decompress_struct& codec) {
  if (!jpeg_has_multiple_scans(const_cast<j_decompress_ptr>(&codec))) return 0;
  uint64_t bytes = 0;
  for (int c = 0; c < codec.num_components; ++c) {
    const jpeg_component_info& component = codec.comp_info[c];
    bytes += uint64_t{component.width_in_blocks} * component.height_in_blocks * sizeof(JBLOCK);
  }
  return bytes;
}

bool jpeg_read_pixels(JpegDecoder& decoder, Image& image) {
  if (setjmp(decoder.errors.jump)) return false;
  jpeg_start_decompress(&decoder.codec);
  const size_t row_bytes = static_cast<size_t>(image.width) * static_cast<size_t>(image.channels);
  const size_t total = row_bytes * static_cast<size_t>(image.height);
  while (decoder.codec.output_scanline < decoder.codec.output_height) {
    const size_t y = decoder.codec.output_scanline;
    grow_to(image.pixels, row_bytes * (y + 1), total);
    JSAMPROW row = image.pixels.data() + row_bytes * y;
    jpeg_read_scanlines(&decoder.codec, &row, 1);
  }
  jpeg_finish_decompress(&decoder.codec);
  return true;
}

// Photoshop (the Adobe marker) stores CMYK inverted: 255 means no ink.
Image cmyk_to_rgb(const Image& cmyk, bool inverted) {
  Image rgb(cmyk.width, cmyk.height, 3);
  for (size_t i = 0; i < cmyk.pixel_count(); ++i) {
    const uint8_t* in = &cmyk.pixels[i * 4];
    const int key = inverted ? in[3] : 255 - in[3];
    for (int c = 0; c < 3; ++c) {
      const int ink_free = inverted ? in[c] : 255 - in[c];
      rgb.pixels[i * 3 + c] = static_cast<uint8_t>((ink_free * key + 127) / 255);
    }
  }
  return rgb;
}

Image decode_jpeg(const uint8_t* bytes, size_t size, const std::string& name, const ImageBudget& budget) {
  JpegDecoder decoder;
  install_jpeg_errors(decoder.errors);
  decoder.codec.err = &decoder.errors.base;
  auto fail = [&]() -> CorruptDataError {
    if (decoder.errors.truncated) return CorruptDataError(name + ": truncated JPEG data");
    return CorruptDataError(name + ": corrupt JPEG data (" + decoder.errors.message + ")");
  };
  if (!jpeg_read_layout(decoder, bytes, size)) throw fail();
  const uint64_t width = decoder.codec.output_width, height = decoder.codec.output_height;
  check_dimensions(width, height, budget, name);
  // CMYK decodes to 4 channels, then a 3-channel copy.
  const uint64_t channels = decoder.codec.out_color_space == JCS_CMYK ? 7 : decoder.codec.out_color_components;
  const uint64_t pixel_bytes = width * height * channels;
  check_bytes(width, height, pixel_bytes + jpeg_working_bytes(decoder.codec), budget, name);
  // libjpeg's own limit as well, for what it allocates beyond our estimate (it has no backing
  // store, so going over it is an error rather than a temporary file).
  decoder.codec.mem->max_memory_to_use = static_cast<long>(static_cast<uint64_t>(budget.max_bytes) - pixel_bytes);
  Image image;
  image.width = static_cast<int>(decoder.codec.output_width);
  image.height = static_cast<int>(decoder.codec.output_height);
  image.channels = decoder.codec.out_color_components;
  if (!jpeg_read_pixels(decoder, image)) {
    if (decoder.errors.base.msg_code == JERR_NO_BACKING_STORE) {  // over max_memory_to_use
      throw UnsupportedError(name + ": decoding the " + size_text(width, height) +
                             " image needs more than the limit of " + byte_text(budget.max_bytes) +
                             " (FLASHPS_MAX_IMAGE_BYTES raises it)");
    }
    throw fail();
  }
  if (decoder.codec.out_color_space == JCS_CMYK) return cmyk_to_rgb(image, decoder.codec.saw_Adobe_marker);
  return image;
}

bool jpeg_write_step(JpegEncoder& encoder, std::FILE* file, const Image& image) {
  if (setjmp(encoder.errors.jump)) return false;
  jpeg_create_compress(&encoder.codec);
  jpeg_stdio_dest(&encoder.codec, file);
  encoder.codec.image_width = static_cast<JDIMENSION>(image.width);
  encoder.codec.image_height = static_cast<JDIMENSION>(image.height);
  encoder.codec.input_components = image.channels;
  encoder.codec.in_color_space = image.channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&encoder.codec);
  jpeg_set_quality(&encoder.codec, kJpegQuality, TRUE);
  jpeg_start_compress(&encoder.codec, TRUE);
  const size_t row_bytes = static_cast<size_t>(image.width) * static_cast<size_t>(image.channels);
  while (encoder.codec.next_scanline < encoder.codec.image_height) {
    // libjpeg's API is not const-correct; it only reads the row.
    JSAMPROW row = const_cast<uint8_t*>(image.pixels.data()) + row_bytes * encoder.codec.next_scanline;
    jpeg_write_scanlines(&encoder.codec, &row, 1);
  }
  jpeg_finish_compress(&encoder.codec);
  return true;
}

// ---------------------------------------------------------------- PNG encoding

struct PngWriteHandles {
  png_structp png = nullptr;
  png_infop info = nullptr;
  ~PngWriteHandles() { png_destroy_write_struct(&png, info ? &info : nullptr); }
};

// libpng's own stdio writer reports every failure as "Write Error"; ours keeps errno.
struct PngSink {
  std::FILE* file = nullptr;
  int error_number = 0;
};

void png_write_to_file(png_structp png, png_bytep data, png_size_t length) {
  auto* sink = static_cast<PngSink*>(png_get_io_ptr(png));
  if (std::fwrite(data, 1, length, sink->file) != length) {
    sink->error_number = errno;
    png_error(png, "write failed");
  }
}

void png_flush_file(png_structp png) {
  auto* sink = static_cast<PngSink*>(png_get_io_ptr(png));
  if (std::fflush(sink->file) != 0) {
    sink->error_number = errno;
    png_error(png, "write failed");
  }
}

// compression_level: zlib's 0..9, or -1 for libpng's default.
bool png_write_step(png_structp png, png_infop info, PngSink& sink, const Image& image, int compression_level) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_set_write_fn(png, &sink, png_write_to_file, png_flush_file);
  if (compression_level >= 0) png_set_compression_level(png, compression_level);
  const int color_type = image.channels == 1   ? PNG_COLOR_TYPE_GRAY
                         : image.channels == 3 ? PNG_COLOR_TYPE_RGB
                                               : PNG_COLOR_TYPE_RGBA;
  png_set_IHDR(png, info, static_cast<png_uint_32>(image.width), static_cast<png_uint_32>(image.height), 8,
               color_type, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int y = 0; y < image.height; ++y) png_write_row(png, image.pixels.data() + image.offset(0, y));
  png_write_end(png, nullptr);
  return true;
}

// ---------------------------------------------------------------- files

std::string errno_text() { return std::strerror(errno); }

std::string lowercase_extension(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return extension;
}

// Removes the temporary file unless the write reached the rename.
struct TemporaryFile {
  std::string path;
  std::FILE* file = nullptr;
  bool committed = false;
  ~TemporaryFile() {
    if (file) std::fclose(file);
    if (!committed) ::unlink(path.c_str());
  }
};

// True when the data is shorter than the signature and matches its beginning.
bool is_signature_prefix(const uint8_t* bytes, size_t size, const uint8_t* signature, size_t signature_size) {
  return size < signature_size && std::memcmp(bytes, signature, size) == 0;
}

}  // namespace

Image::Image(int width_, int height_, int channels_, uint8_t fill)
    : width(width_), height(height_), channels(channels_) {
  if (width_ < 0 || height_ < 0 || channels_ < 0) throw InvalidArgumentError("Image: negative size");
  pixels.assign(pixel_count() * static_cast<size_t>(channels_), fill);
}

void check_image(const Image& image, const std::string& name) {
  if (image.channels != 1 && image.channels != 3 && image.channels != 4) {
    throw InvalidArgumentError(name + ": unsupported channel count " + std::to_string(image.channels) +
                               " (expected 1, 3 or 4)");
  }
  if (image.width <= 0 || image.height <= 0) {
    throw InvalidArgumentError(name + ": empty image (" + std::to_string(image.width) + "x" +
                               std::to_string(image.height) + ")");
  }
  const size_t expected = image.pixel_count() * static_cast<size_t>(image.channels);
  if (image.pixels.size() != expected) {
    throw InvalidArgumentError(name + ": pixel buffer holds " + std::to_string(image.pixels.size()) +
                               " bytes, expected " + std::to_string(expected));
  }
}

ImageBudget image_budget() {
  ImageBudget budget;
  budget.max_pixels = budget_from_environment("FLASHPS_MAX_IMAGE_PIXELS", kMaxImagePixels);
  budget.max_bytes = budget_from_environment("FLASHPS_MAX_IMAGE_BYTES", kMaxImageBytes);
  return budget;
}

Image decode_image(const uint8_t* bytes, size_t size, const std::string& source_name) {
  return decode_image(bytes, size, source_name, image_budget());
}

Image decode_image(const uint8_t* bytes, size_t size, const std::string& source_name, const ImageBudget& budget) {
  if (size == 0) throw CorruptDataError(source_name + ": empty data");
  if (size >= sizeof kPngSignature && std::memcmp(bytes, kPngSignature, sizeof kPngSignature) == 0) {
    return decode_png(bytes, size, source_name, budget);
  }
  if (size >= sizeof kJpegSignature && std::memcmp(bytes, kJpegSignature, sizeof kJpegSignature) == 0) {
    return decode_jpeg(bytes, size, source_name, budget);
  }
  // A file cut inside its signature is still recognisably truncated (two bytes at least, so a
  // single stray 0xFF byte is not called a JPEG).
  if (size >= 2 && is_signature_prefix(bytes, size, kPngSignature, sizeof kPngSignature)) {
    throw CorruptDataError(source_name + ": truncated PNG data");
  }
  if (size >= 2 && is_signature_prefix(bytes, size, kJpegSignature, sizeof kJpegSignature)) {
    throw CorruptDataError(source_name + ": truncated JPEG data");
  }
  throw CorruptDataError(source_name + ": not a PNG or JPEG image");
}

Image read_image(const std::string& path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (status.type() == std::filesystem::file_type::not_found) throw NotFoundError(path + ": file not found");
  if (std::filesystem::is_directory(status)) throw InvalidArgumentError(path + ": is a directory, not an image file");

  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) {
    if (errno == ENOENT) throw NotFoundError(path + ": file not found");  // removed since the check
    throw IoError(path + ": cannot open: " + errno_text());
  }
  std::vector<uint8_t> bytes;
  uint8_t chunk[1 << 16];
  size_t got = 0;
  while ((got = std::fread(chunk, 1, sizeof chunk, file)) > 0) {
    if (bytes.size() + got > kMaxFileBytes) {
      std::fclose(file);
      throw UnsupportedError(path + ": file is larger than " + std::to_string(kMaxFileBytes >> 20) + " MiB");
    }
    bytes.insert(bytes.end(), chunk, chunk + got);
  }
  const bool read_failed = std::ferror(file) != 0;
  const std::string reason = errno_text();
  std::fclose(file);
  if (read_failed) throw IoError(path + ": cannot read: " + reason);
  if (bytes.empty()) throw CorruptDataError(path + ": empty file");
  return decode_image(bytes.data(), bytes.size(), path, image_budget());
}

namespace {

void write_image_stream_at_level(std::FILE* file, const Image& image, ImageFormat format, const std::string& name,
                                 int png_level) {
  check_image(image, name);
  if (format == ImageFormat::png) {
    char message[kMessageLength] = {};
    PngWriteHandles handles;
    handles.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, message, png_on_error, png_on_warning);
    if (handles.png) handles.info = png_create_info_struct(handles.png);
    if (!handles.png || !handles.info) throw Error(name + ": cannot initialise libpng (out of memory)");
    PngSink sink;
    sink.file = file;
    if (!png_write_step(handles.png, handles.info, sink, image, png_level)) {
      const std::string reason = sink.error_number ? write_failure_text(sink.error_number) : message;
      throw IoError(name + ": cannot write PNG: " + reason);
    }
  } else {
    const Image pixels = image.channels == 4 ? to_rgb(image) : Image();
    JpegEncoder encoder;
    install_jpeg_errors(encoder.errors);
    encoder.codec.err = &encoder.errors.base;
    if (!jpeg_write_step(encoder, file, image.channels == 4 ? pixels : image)) {
      const bool io_failed = encoder.errors.base.msg_code == JERR_FILE_WRITE && encoder.errors.error_number != 0;
      throw IoError(name + ": cannot write JPEG: " +
                    (io_failed ? write_failure_text(encoder.errors.error_number) : encoder.errors.message));
    }
  }
  // stdio holds the last bytes until this flush: a full disk often shows only here.
  if (std::fflush(file) != 0 || std::ferror(file)) {
    throw IoError(name + ": cannot write " + (format == ImageFormat::png ? "PNG" : "JPEG") + ": " +
                  write_failure_text(errno));
  }
}

}  // namespace

void write_image_stream(std::FILE* file, const Image& image, ImageFormat format, const std::string& name) {
  write_image_stream_at_level(file, image, format, name, -1);
}

std::vector<uint8_t> encode_image(const Image& image, ImageFormat format, int png_level, const std::string& name) {
  if (png_level < -1 || png_level > 9)
    throw InvalidArgumentError(name + ": PNG compression level " + std::to_string(png_level) + " is outside -1..9");
  char* buffer = nullptr;
  size_t size = 0;
  std::FILE* stream = ::open_memstream(&buffer, &size);
  if (!stream) throw std::bad_alloc();
  try {
    write_image_stream_at_level(stream, image, format, name, png_level);
  } catch (...) {
    std::fclose(stream);
    std::free(buffer);
    throw;
  }
  std::fclose(stream);  // publishes the final buffer and size
  std::vector<uint8_t> bytes(buffer, buffer + size);
  std::free(buffer);
  return bytes;
}

std::string image_write_loss(const std::string& path, const Image& image) {
  if (image.channels != 4 || lowercase_extension(path) == ".png") return {};
  // The same words as `flashps edit` prints (cli/commands/edit.cpp), so both front ends read alike.
  return "the input's transparency is not in " + path + ": JPEG has no alpha channel (write a .png to keep it)";
}

void write_image(const std::string& path, const Image& image) {
  const std::string extension = lowercase_extension(path);
  const bool as_png = extension == ".png";
  if (!as_png && extension != ".jpg" && extension != ".jpeg") {
    throw UnsupportedError(path + ": unsupported image extension '" + extension + "' (use .png, .jpg or .jpeg)");
  }
  check_image(image, path);

  static std::atomic<unsigned> counter{0};
  TemporaryFile temporary;
  temporary.path = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  temporary.file = std::fopen(temporary.path.c_str(), "wbx");
  if (!temporary.file) {
    throw IoError(path + ": cannot create temporary file '" + temporary.path + "': " + write_failure_text(errno));
  }

  write_image_stream(temporary.file, image, as_png ? ImageFormat::png : ImageFormat::jpeg, path);
  // fsync before rename: otherwise a crash can leave the new name pointing at unwritten blocks.
  if (::fsync(::fileno(temporary.file)) != 0) throw IoError(path + ": cannot write: " + write_failure_text(errno));
  const int close_result = std::fclose(temporary.file);
  temporary.file = nullptr;
  if (close_result != 0) throw IoError(path + ": cannot write: " + write_failure_text(errno));
  if (::rename(temporary.path.c_str(), path.c_str()) != 0) {
    throw IoError(path + ": cannot rename temporary file into place: " + errno_text());
  }
  temporary.committed = true;
  // Make the rename itself durable; best effort, as some filesystems refuse to fsync folders.
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  const int folder_fd = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (folder_fd >= 0) {
    ::fsync(folder_fd);
    ::close(folder_fd);
  }
}

Image to_rgb(const Image& image) {
  check_image(image, "to_rgb");
  if (image.channels == 3) return image;
  Image rgb(image.width, image.height, 3);
  for (size_t i = 0; i < image.pixel_count(); ++i) {
    const uint8_t* in = &image.pixels[i * image.channels];
    for (int c = 0; c < 3; ++c) rgb.pixels[i * 3 + c] = image.channels == 1 ? in[0] : in[c];
  }
  return rgb;
}

Image to_gray(const Image& image) {
  check_image(image, "to_gray");
  if (image.channels == 1) return image;
  Image gray(image.width, image.height, 1);
  for (size_t i = 0; i < image.pixel_count(); ++i) {
    const uint8_t* in = &image.pixels[i * image.channels];
    // BT.601 weights in 8.8 fixed point; they sum to 256 so white stays 255.
    gray.pixels[i] = static_cast<uint8_t>((77 * in[0] + 150 * in[1] + 29 * in[2] + 128) >> 8);
  }
  return gray;
}

}  // namespace flashps
