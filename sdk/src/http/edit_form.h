// What an edit request asked for, read from a multipart form (OpenAI's images API, and the native
// API) or a JSON body with base64 images (the native API), then checked against the server's
// limits and decoded. The whole untrusted-input path of an edit, without the engine: the fuzz
// target (fuzz/fuzz_http_request.cpp) runs it on raw HTTP requests.
#pragma once
#include <flashps/flashps.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "http/wire/message.h"

namespace flashps::http {

struct FormLimits {
  int64_t max_pixels = 16777216;
  int max_prompt_chars = 4000;
  int max_images = 4;
};

// How the mask marks the region to regenerate.
enum class MaskConvention {
  transparent,  // OpenAI: the mask's (else the image's) fully transparent pixels (alpha 0)
  white         // FlashPS: the SDK's one rule (flashps_mask_from_image: values >= 128), as everywhere
};

struct EditForm {
  std::string image, mask;  // encoded PNG/JPEG bytes; mask empty when none was sent
  std::string prompt, negative_prompt, model, size, response_format, output_format, cache;
  int n = 1;
  std::optional<uint64_t> seed;
  std::optional<int> steps, mask_grow_pixels, mask_feather_pixels, context_size, max_sequence_length;
  std::optional<float> strength, guidance_scale;
  double deadline_seconds = 0;
  bool stream = false;     // OpenAI: answer with Server-Sent Events (openai_stream.h)
  int partial_images = 0;  // OpenAI, with stream: 0..3 partial images before the final one
};

// Reads a multipart/form-data or application/json request. Throws HttpError: 415 for another
// content type, 400 for a missing or malformed field (not a number, ...), 422 for a value over
// one of the server's limits (prompt length, n). The edit's settings are judged by
// edit_options_of.
EditForm read_edit_form(const Request& request, const FormLimits& limits);
EditForm read_json_edit_form(const std::string& body, const FormLimits& limits);

struct EditImages {
  sdk::Image image, mask;  // mask: an SDK mask (read by the SDK's rule, resized by it if its size differs)
};

// Decodes both images within limits.max_pixels (413 over it, 400 for corrupt data naming the
// field). The native convention hands the mask to the SDK as sent, so it selects the same pixels
// as in every other front end. OpenAI's is converted once into a 1-channel SDK mask (255 where
// the mask, else the image, is fully transparent) at the mask's own size, and drops the image's
// alpha (the transparent region is regenerated, not kept transparent).
EditImages decode_edit_images(const EditForm& form, const FormLimits& limits, MaskConvention convention);

// One image field: 413 over limits.max_pixels, 400 for data that is not a readable PNG/JPEG.
sdk::Image decode_image_field(const std::string& bytes, const std::string& field, const FormLimits& limits);

// The form's settings, checked by the SDK's one set of rules (sdk::EditOptions::check): HttpError
// 400 with the SDK's message and the form's field as param ("steps is 1001; it must be 0 (the
// model's recommendation) to 1000", param "steps"), or for an unknown cache name.
sdk::EditOptions edit_options_of(const EditForm& form);

// "1024x1024" -> (1024, 1024); "auto" or "" -> nullopt. Throws HttpError(400) otherwise.
std::optional<std::pair<int, int>> parse_size(const std::string& size);

}  // namespace flashps::http
