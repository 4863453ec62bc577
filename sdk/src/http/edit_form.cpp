#include "http/edit_form.h"

#include "http/router.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

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

// A whole number that fits the SDK's int fields; the SDK judges its range.
int int_field(const std::string& text, const std::string& field) {
  const int64_t value = parse_integer(text, field);
  if (value < INT32_MIN || value > INT32_MAX)
    throw HttpError(400, field + " is " + text.substr(0, 40) + ", which is out of range", field);
  return static_cast<int>(value);
}

// 0 to 2^64 - 1, digits only.
uint64_t parse_seed(const std::string& text) {
  const std::string range = "seed must be a whole number from 0 to 18446744073709551615, not '" + text.substr(0, 40) + "'";
  if (text.empty() || text.size() > 20 || text.find_first_not_of("0123456789") != std::string::npos)
    throw HttpError(400, range, "seed");
  errno = 0;
  const unsigned long long value = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE) throw HttpError(400, range, "seed");
  return value;
}

// Shared by both readers once every field is a string: types and the server's own limits. The
// edit's settings are judged by the SDK's one set of rules (edit_options_of).
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
    form.cache = value.substr(0, 64);
  } else if (name == "seed") {
    form.seed = parse_seed(value);
  } else if (name == "steps") {
    form.steps = int_field(value, name);
  } else if (name == "mask_grow_pixels") {
    form.mask_grow_pixels = int_field(value, name);
  } else if (name == "mask_feather_pixels") {
    form.mask_feather_pixels = int_field(value, name);
  } else if (name == "context_size") {
    form.context_size = int_field(value, name);
  } else if (name == "max_sequence_length") {
    form.max_sequence_length = int_field(value, name);
  } else if (name == "strength") {
    form.strength = static_cast<float>(parse_number(value, name));
  } else if (name == "guidance_scale") {
    form.guidance_scale = static_cast<float>(parse_number(value, name));
  } else if (name == "stream") {
    if (value != "true" && value != "false")
      throw HttpError(400, "stream must be true or false, not '" + value.substr(0, 40) + "'", name);
    form.stream = value == "true";
  } else if (name == "partial_images") {
    const int64_t count = parse_integer(value, name);
    if (count < 0 || count > 3)
      throw HttpError(400, "partial_images is " + std::to_string(count) + "; it must be 0 to 3", name);
    form.partial_images = static_cast<int>(count);
  } else if (name == "deadline_seconds") {
    const double seconds = parse_number(value, name);
    if (seconds < 0 || seconds > 86400) throw HttpError(400, "deadline_seconds must be in 0..86400", name);
    form.deadline_seconds = seconds;
  }
  // Other fields (user, quality, background, ...) are accepted and ignored, as newer clients send
  // them: refusing would break those clients for options that change nothing here.
}

// The one rule for repeated fields, for the multipart and the JSON reader alike: each field is
// sent once. A second copy is refused rather than silently replacing the first (or being ignored).
// `image[]` is OpenAI's array syntax for several images: refused in read_edit_form as such.
void check_sent_once(std::set<std::string>& seen, const std::string& name) {
  if (!seen.insert(name).second)
    throw HttpError(400, "the field '" + name.substr(0, 64) + "' is sent more than once; send each field once",
                    name.substr(0, 64), "duplicate_field");
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
  std::set<std::string> seen;
  const json document = json::parse(body, [&seen](int depth, json::parse_event_t event, json& parsed) {
    if (depth == 1 && event == json::parse_event_t::key) check_sent_once(seen, parsed.get<std::string>());
    return true;
  }, false);
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
    } else if (value.is_number_unsigned()) {
      set_field(form, name, std::to_string(value.get<uint64_t>()), limits);
    } else if (value.is_number_integer()) {
      set_field(form, name, std::to_string(value.get<int64_t>()), limits);
    } else if (value.is_number_float()) {
      const double number = value.get<double>();
      // Integers written as 8.0 are integers; others keep their digits.
      if (std::floor(number) == number && std::fabs(number) < 9e15)
        set_field(form, name, std::to_string(static_cast<int64_t>(number)), limits);
      else
        set_field(form, name, json(number).dump(), limits);
    } else if (value.is_boolean()) {
      set_field(form, name, value.get<bool>() ? "true" : "false", limits);
    } else if (!value.is_null()) {
      if (name == "prompt" || name == "n" || name == "seed" || name == "steps" || name == "strength" || name == "size")
        throw HttpError(400, name + " has the wrong type", name);
    }
  }
  require_image(form);
  return form;
}

EditForm read_edit_form(const Request& request, const FormLimits& limits) {
  const std::string content_type = request.get_header_value("Content-Type");
  if (content_type.rfind("application/json", 0) == 0) return read_json_edit_form(request.body, limits);
  if (!request.is_multipart_form_data())
    throw HttpError(415, "expected multipart/form-data or application/json, not '" + content_type.substr(0, 80) + "'",
                    "", "unsupported_media_type");
  EditForm form;
  std::set<std::string> seen;
  for (const auto& [name, part] : request.files) {
    if (name != "image[]") check_sent_once(seen, name);
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

EditImages decode_edit_images(const EditForm& form, const FormLimits& limits, MaskConvention convention) {
  EditImages images;
  images.image = decode_image_field(form.image, "image", limits);
  if (convention == MaskConvention::white) {
    if (form.mask.empty()) throw HttpError(400, "the request has no mask (white marks the region to regenerate)", "mask");
    // As sent: the SDK reads it by its one rule and resizes it, as for every other front end.
    images.mask = decode_image_field(form.mask, "mask", limits);
    return images;
  }
  // OpenAI's convention, converted once into an SDK mask: the mask's (else the image's) fully
  // transparent pixels are regenerated (255), every other pixel kept (0). A mask of another size
  // is then resized by the SDK like any other.
  const sdk::Image& image = images.image;
  const sdk::Image source_mask = form.mask.empty() ? sdk::Image() : decode_image_field(form.mask, "mask", limits);
  const sdk::Image& alpha_source = form.mask.empty() ? image : source_mask;
  if (alpha_source.channels != 4)
    throw HttpError(400, form.mask.empty()
                             ? "the image has no transparent pixels and no mask was sent: send a mask whose "
                               "transparent pixels mark the region to edit"
                             : "the mask has no alpha channel: its fully transparent pixels mark the region to edit",
                    form.mask.empty() ? "image" : "mask");
  images.mask = sdk::Image(alpha_source.width, alpha_source.height, 1);
  for (size_t i = 0; i < images.mask.pixels.size(); ++i)
    images.mask.pixels[i] = alpha_source.pixels[i * 4 + 3] == 0 ? 255 : 0;
  if (image.channels == 4) {  // to RGB: the edited region must not stay transparent
    const size_t pixels = size_t(image.width) * image.height;
    sdk::Image rgb(image.width, image.height, 3);
    for (size_t i = 0; i < pixels; ++i)
      for (int c = 0; c < 3; ++c) rgb.pixels[i * 3 + c] = image.pixels[i * 4 + c];
    images.image = std::move(rgb);
  }
  return images;
}

namespace {

// The SDK names flashps_edit_params' fields; a client sent the form's (the same but "cache").
[[noreturn]] void throw_as_form_error(const sdk::Error& error, const std::string& fallback_field) {
  const std::string prefix = "flashps_edit_params.";
  std::string message = error.what();
  std::string field = fallback_field;
  if (message.rfind(prefix, 0) == 0) {
    message.erase(0, prefix.size());
    field = message.substr(0, message.find(' '));
    if (field == "cache_mode") {
      message.replace(0, field.size(), "cache");
      field = "cache";
    }
  }
  throw HttpError(http_status_of(error.status()), message, field);
}

}  // namespace

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
  options.prompt = form.prompt;
  options.negative_prompt = form.negative_prompt;
  try {
    if (!form.cache.empty()) options.cache_mode = sdk::cache_mode_from_name(form.cache);
  } catch (const sdk::Error& error) {
    throw_as_form_error(error, "cache");
  }
  try {
    options.check();
  } catch (const sdk::Error& error) {
    throw_as_form_error(error, "");
  }
  return options;
}

}  // namespace flashps::http
