#include "http/edit_form.h"

#include <httplib.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "http/base64.h"
#include "http/http_error.h"

namespace flashps::http {
namespace {

using nlohmann::json;

// Code points, not bytes: a limit in characters means the same for every script.
size_t utf8_length(const std::string& text) {
  size_t count = 0;
  for (const char c : text) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return count;
}

void check_prompt(const std::string& prompt, const std::string& field, const FormLimits& limits) {
  if (utf8_length(prompt) > static_cast<size_t>(limits.max_prompt_chars))
    throw HttpError(422, field + " has " + std::to_string(utf8_length(prompt)) + " characters; at most " +
                             std::to_string(limits.max_prompt_chars) + " are allowed",
                    field, "prompt_too_long");
}

int64_t parse_integer(const std::string& text, const std::string& field) {
  size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) throw HttpError(400, field + " must be an integer, not '" + text.substr(0, 40) + "'", field);
  return value;
}

double parse_number(const std::string& text, const std::string& field) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(value))
    throw HttpError(400, field + " must be a number, not '" + text.substr(0, 40) + "'", field);
  return value;
}

int bounded_int(int64_t value, int64_t low, int64_t high, const std::string& field) {
  if (value < low || value > high)
    throw HttpError(400, field + " is " + std::to_string(value) + "; it must be in " + std::to_string(low) + ".." +
                             std::to_string(high),
                    field);
  return static_cast<int>(value);
}

// Shared by both readers once every field is a string: one place for ranges and limits.
void set_field(EditForm& form, const std::string& name, const std::string& value, const FormLimits& limits) {
  if (name == "prompt") {
    form.prompt = value;
    check_prompt(value, name, limits);
  } else if (name == "negative_prompt") {
    form.negative_prompt = value;
    check_prompt(value, name, limits);
  } else if (name == "n") {
    const int64_t n = parse_integer(value, name);
    if (n < 1 || n > limits.max_images)
      throw HttpError(422, "n is " + std::to_string(n) + "; this server makes 1.." + std::to_string(limits.max_images) +
                               " images per request",
                      "n", "too_many_images");
    form.n = static_cast<int>(n);
  } else if (name == "model") {
    form.model = value.substr(0, 256);
  } else if (name == "size") {
    form.size = value;
    parse_size(value);
  } else if (name == "response_format") {
    if (value != "b64_json" && value != "url")
      throw HttpError(400, "response_format must be 'b64_json' or 'url', not '" + value.substr(0, 40) + "'", name);
    form.response_format = value;
  } else if (name == "output_format") {
    if (value != "png" && value != "jpeg")
      throw HttpError(422, "output_format '" + value.substr(0, 40) + "' is not supported (png or jpeg)", name);
    form.output_format = value;
  } else if (name == "cache") {
    if (value != "auto" && value != "full" && value != "kv" && value != "hidden")
      throw HttpError(400, "cache must be auto, full, kv or hidden, not '" + value.substr(0, 40) + "'", name);
    form.cache = value;
  } else if (name == "seed") {
    const int64_t seed = parse_integer(value, name);
    if (seed < 0) throw HttpError(400, "seed must be >= 0", name);
    form.seed = static_cast<uint64_t>(seed);
  } else if (name == "steps") {
    form.steps = bounded_int(parse_integer(value, name), 1, 1000, name);
  } else if (name == "mask_grow_pixels" || name == "mask_feather_pixels") {
    const int pixels = bounded_int(parse_integer(value, name), 0, 4096, name);
    (name == "mask_grow_pixels" ? form.mask_grow_pixels : form.mask_feather_pixels) = pixels;
  } else if (name == "context_size") {
    form.context_size = bounded_int(parse_integer(value, name), -1, 16384, name);
  } else if (name == "max_sequence_length") {
    form.max_sequence_length = bounded_int(parse_integer(value, name), 1, 512, name);
  } else if (name == "strength") {
    const double strength = parse_number(value, name);
    if (!(strength > 0 && strength <= 1)) throw HttpError(400, "strength must be in (0, 1]", name);
    form.strength = static_cast<float>(strength);
  } else if (name == "guidance_scale") {
    const double scale = parse_number(value, name);
    if (scale < 0 || scale > 100) throw HttpError(400, "guidance_scale must be in 0..100", name);
    form.guidance_scale = static_cast<float>(scale);
  } else if (name == "deadline_seconds") {
    const double seconds = parse_number(value, name);
    if (seconds < 0 || seconds > 86400) throw HttpError(400, "deadline_seconds must be in 0..86400", name);
    form.deadline_seconds = seconds;
  }
  // Other fields (user, quality, background, ...) are accepted and ignored, as newer clients send
  // them: refusing would break those clients for options that change nothing here.
}

void require_image(const EditForm& form) {
  if (form.image.empty()) throw HttpError(400, "the request has no image (a PNG or JPEG in the 'image' field)", "image");
}

// Deeply nested JSON would make the parser's recursion (and the error's) the attack surface.
void check_json_depth(const std::string& body) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (const char c : body) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > 16) throw HttpError(400, "the JSON body nests deeper than 16 levels", "");
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

}  // namespace

std::optional<std::pair<int, int>> parse_size(const std::string& size) {
  if (size.empty() || size == "auto") return std::nullopt;
  const size_t x = size.find('x');
  const auto side = [&](const std::string& text) {
    if (text.empty() || text.size() > 5 || text.find_first_not_of("0123456789") != std::string::npos) return -1;
    return std::stoi(text);
  };
  const int width = x == std::string::npos ? -1 : side(size.substr(0, x));
  const int height = x == std::string::npos ? -1 : side(size.substr(x + 1));
  if (width <= 0 || height <= 0)
    throw HttpError(400, "size must be WIDTHxHEIGHT (e.g. 1024x1024) or auto, not '" + size.substr(0, 40) + "'", "size");
  return std::make_pair(width, height);
}

EditForm read_json_edit_form(const std::string& body, const FormLimits& limits) {
  check_json_depth(body);
  const json document = json::parse(body, nullptr, false);
  if (document.is_discarded()) throw HttpError(400, "the body is not valid JSON");
  if (!document.is_object()) throw HttpError(400, "the JSON body must be an object");
  EditForm form;
  for (const auto& [name, value] : document.items()) {
    if (name == "image" || name == "mask") {
      if (!value.is_string()) throw HttpError(400, name + " must be a base64 string (PNG or JPEG)", name);
      auto bytes = base64_decode(value.get_ref<const std::string&>());
      if (!bytes) throw HttpError(400, name + " is not valid base64", name);
      (name == "image" ? form.image : form.mask) = std::move(*bytes);
    } else if (value.is_string()) {
      set_field(form, name, value.get<std::string>(), limits);
    } else if (value.is_number_integer() || value.is_number_unsigned()) {
      set_field(form, name, std::to_string(value.get<int64_t>()), limits);
    } else if (value.is_number_float()) {
      const double number = value.get<double>();
      // Integers written as 8.0 are integers; others keep their digits.
      if (std::floor(number) == number && std::fabs(number) < 9e15)
        set_field(form, name, std::to_string(static_cast<int64_t>(number)), limits);
      else
        set_field(form, name, json(number).dump(), limits);
    } else if (!value.is_null()) {
      if (name == "prompt" || name == "n" || name == "seed" || name == "steps" || name == "strength" || name == "size")
        throw HttpError(400, name + " has the wrong type", name);
    }
  }
  require_image(form);
  return form;
}

EditForm read_edit_form(const httplib::Request& request, const FormLimits& limits) {
  const std::string content_type = request.get_header_value("Content-Type");
  if (content_type.rfind("application/json", 0) == 0) return read_json_edit_form(request.body, limits);
  if (!request.is_multipart_form_data())
    throw HttpError(415, "expected multipart/form-data or application/json, not '" + content_type.substr(0, 80) + "'",
                    "", "unsupported_media_type");
  EditForm form;
  for (const auto& [name, part] : request.files) {
    if (name == "image" || name == "image[]") {
      if (!form.image.empty()) throw HttpError(422, "one image per request is supported", "image");
      form.image = part.content;
    } else if (name == "mask") {
      form.mask = part.content;
    } else {
      set_field(form, name, part.content, limits);
    }
  }
  require_image(form);
  return form;
}

sdk::Image decode_image_field(const std::string& bytes, const std::string& field, const FormLimits& limits) {
  try {
    return sdk::Image::decode_bounded(bytes.data(), bytes.size(), field, limits.max_pixels);
  } catch (const sdk::Error& error) {
    if (error.status() == FLASHPS_OUT_OF_MEMORY)
      throw HttpError(503, std::string("out of memory decoding ") + field + "; retry later", field);
    const int status = http_status_of(error.status(), /*decoding=*/true);
    std::string message = error.what();
    if (status == 413) {  // the SDK names its own environment variable; here the server's limit applies
      const size_t hint = message.find(" (FLASHPS_MAX_IMAGE_PIXELS");
      if (hint != std::string::npos) message.erase(hint);
      message += " (this server takes at most " + std::to_string(limits.max_pixels) + " pixels per image)";
    }
    throw HttpError(status == 413 ? 413 : 400, message, field, status == 413 ? "image_too_large" : "invalid_image");
  }
}

namespace {

bool has_alpha(const sdk::Image& image) { return image.channels == 4; }

}  // namespace

EditImages decode_edit_images(const EditForm& form, const FormLimits& limits, MaskConvention convention) {
  EditImages images;
  images.image = decode_image_field(form.image, "image", limits);
  const sdk::Image& image = images.image;
  sdk::Image source_mask;
  if (!form.mask.empty()) {
    source_mask = decode_image_field(form.mask, "mask", limits);
    if (source_mask.width != image.width || source_mask.height != image.height)
      throw HttpError(400, "the mask is " + std::to_string(source_mask.width) + "x" + std::to_string(source_mask.height) +
                               " but the image is " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                               "; they must be the same size",
                      "mask");
  }
  images.mask = sdk::Image(image.width, image.height, 1);
  const size_t pixels = size_t(image.width) * image.height;
  if (convention == MaskConvention::transparent) {
    // The mask's alpha, else the image's own: fully transparent pixels are regenerated.
    const sdk::Image& alpha_source = form.mask.empty() ? image : source_mask;
    if (!has_alpha(alpha_source))
      throw HttpError(400, form.mask.empty()
                               ? "the image has no transparent pixels and no mask was sent: send a mask whose "
                                 "transparent pixels mark the region to edit"
                               : "the mask has no alpha channel: its fully transparent pixels mark the region to edit",
                      form.mask.empty() ? "image" : "mask");
    for (size_t i = 0; i < pixels; ++i) images.mask.pixels[i] = alpha_source.pixels[i * 4 + 3] == 0 ? 255 : 0;
    if (has_alpha(image)) {  // to RGB: the edited region must not stay transparent
      sdk::Image rgb(image.width, image.height, 3);
      for (size_t i = 0; i < pixels; ++i)
        for (int c = 0; c < 3; ++c) rgb.pixels[i * 3 + c] = image.pixels[i * 4 + c];
      images.image = std::move(rgb);
    }
  } else if (form.mask.empty()) {
    throw HttpError(400, "the request has no mask (white marks the region to regenerate)", "mask");
  } else {
    for (size_t i = 0; i < pixels; ++i) {
      // The SDK's rule on the first channel (a grey mask saved as RGB has equal channels).
      images.mask.pixels[i] = source_mask.pixels[i * source_mask.channels] >= 128 ? 255 : 0;
    }
  }
  return images;
}

sdk::EditOptions edit_options_of(const EditForm& form) {
  sdk::EditOptions options;
  if (form.seed) options.seed = *form.seed;
  if (form.steps) options.steps = *form.steps;
  if (form.strength) options.strength = *form.strength;
  if (form.guidance_scale) options.guidance_scale = *form.guidance_scale;
  if (form.mask_grow_pixels) options.mask_grow_pixels = *form.mask_grow_pixels;
  if (form.mask_feather_pixels) options.mask_feather_pixels = *form.mask_feather_pixels;
  if (form.context_size) options.context_size = *form.context_size;
  if (form.max_sequence_length) options.max_sequence_length = *form.max_sequence_length;
  if (!form.cache.empty()) options.cache_mode = sdk::cache_mode_from_name(form.cache);
  options.prompt = form.prompt;
  options.negative_prompt = form.negative_prompt;
  return options;
}

}  // namespace flashps::http
