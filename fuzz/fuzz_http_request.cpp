// libFuzzer target for the untrusted-input path of an HTTP edit request: the input is the raw
// bytes a client sends on a connection, run through the server's own wire parsers
// (sdk/src/http/wire/: the request head within its budget, the body's framing, a chunked body
// decoder, the multipart/form-data reader) and then through the server's edit-form code
// (sdk/src/http/edit_form.cpp: read_edit_form -> decode_edit_images -> edit_options_of, with
// base64.cpp both ways, http_error.cpp, and the PNG / JPEG decoder behind
// flashps_image_decode_bounded, here fuzz/public_api_shim.cpp).
//
// The input reaches the parsers in pieces of varying size, as a socket delivers it, and again
// whole: both must give the same result (the readers are incremental; a state carried wrongly
// across a piece boundary shows as a difference). Expected outcomes are an answer (any status)
// and, inside the routes, flashps::http::HttpError or flashps::sdk::Error. Any other exception,
// a refusal with a status the server does not give, a limit exceeded (head bytes, body bytes,
// parts), a broken promise of decode_edit_images (pixel counts, the OpenAI convention's 0/255
// mask; the native one hands the mask on as sent, for the SDK to read) and sanitizer reports
// abort. Seeds: fuzz/corpus/http_request/; dictionary: fuzz/fuzz_http_request.dict.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <typeinfo>

#include "http/base64.h"
#include "http/edit_form.h"
#include "http/http_error.h"
#include "http/wire/body_framing.h"
#include "http/wire/chunked_body.h"
#include "http/wire/message.h"
#include "http/wire/multipart.h"
#include "http/wire/request_head.h"

namespace {

namespace http = flashps::http;
namespace sdk = flashps::sdk;

// Small enough that no input can make the harness allocate gigabytes: 1 MiB bodies, 1 MP images.
// The prompt limit is lower than the server's (4000) so that inputs of libFuzzer's size reach it.
// The head budget is the server's; the part limit lower, so inputs reach it.
constexpr size_t kMaxBodyBytes = size_t{1} << 20;
const http::FormLimits kLimits{/*max_pixels=*/int64_t{1} << 20, /*max_prompt_chars=*/200, /*max_images=*/4};
const http::HeadLimits kHeadLimits{};
const http::MultipartLimits kMultipartLimits{/*max_parts=*/8, /*max_part_head_bytes=*/512};

const bool kVerbose = std::getenv("FLASHPS_FUZZ_VERBOSE") != nullptr;  // prints each answer

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "fuzz_http_request: %s\n", what);
  std::fflush(stderr);
  std::abort();
}

void check_refusal(const http::WireError& error, std::initializer_list<int> statuses, const char* what) {
  if (std::find(statuses.begin(), statuses.end(), error.status) == statuses.end()) finding(what);
  if (error.message.empty()) finding("a wire refusal without a message");
  if (kVerbose) std::fprintf(stderr, "refused %d: %s\n", error.status, error.message.c_str());
}

// Piece sizes cycle through these: single bytes, line-sized, and larger reads.
size_t piece_size(size_t index) {
  static constexpr size_t kSizes[] = {1, 2, 3, 5, 8, 13, 64, 1, 4096};
  return kSizes[index % (sizeof kSizes / sizeof kSizes[0])];
}

struct HeadResult {
  http::RequestHeadReader::State state;
  size_t taken = 0;
  http::Request request;
  http::WireError error;
};

HeadResult read_head(const std::string& input, bool in_pieces) {
  http::RequestHeadReader reader(kHeadLimits);
  size_t at = 0;
  for (size_t piece = 0; at < input.size() && reader.state() == http::RequestHeadReader::State::reading; ++piece) {
    const size_t n = in_pieces ? std::min(piece_size(piece), input.size() - at) : input.size() - at;
    const size_t used = reader.feed(input.data() + at, n);
    if (used > n) finding("the head reader took more than it was given");
    at += used;
    if (used < n && reader.state() == http::RequestHeadReader::State::reading)
      finding("the head reader stopped taking bytes while still reading");
  }
  HeadResult result{reader.state(), at, {}, reader.error()};
  if (at > kHeadLimits.max_bytes) finding("the head reader took more than its byte budget");
  if (reader.state() == http::RequestHeadReader::State::complete) reader.move_into(result.request);
  return result;
}

struct ChunkedResult {
  http::ChunkedBodyReader::State state;
  size_t taken = 0;
  std::string body;
  int status = 0;
};

ChunkedResult read_chunked(const std::string& input, bool in_pieces) {
  http::ChunkedBodyReader reader(kMaxBodyBytes);
  ChunkedResult result{};
  size_t at = 0;
  for (size_t piece = 0; at < input.size() && reader.state() == http::ChunkedBodyReader::State::reading; ++piece) {
    const size_t n = in_pieces ? std::min(piece_size(piece), input.size() - at) : input.size() - at;
    at += reader.feed(input.data() + at, n, result.body);
    if (result.body.size() > kMaxBodyBytes) finding("the chunked reader kept more than the body limit");
  }
  result.state = reader.state();
  result.taken = at;
  if (reader.state() == http::ChunkedBodyReader::State::failed) {
    check_refusal(reader.error(), {400, 413, 431}, "a chunked body refused with an unexpected status");
    result.status = reader.error().status;
  }
  return result;
}

// What both edit routes do with a request before the engine (openai_routes.cpp's images_edits,
// edit_routes.cpp's submit_edit), with the promises of decode_edit_images checked.
void edit_route(const http::Request& request, http::Response& response, http::MaskConvention convention) {
  try {
    const http::EditForm form = http::read_edit_form(request, kLimits);
    const http::EditImages images = http::decode_edit_images(form, kLimits, convention);
    const sdk::Image& image = images.image;
    const sdk::Image& mask = images.mask;
    if (image.width == 0 || image.height == 0 || int64_t{image.width} * image.height > kLimits.max_pixels)
      finding("decode_edit_images returned an image outside the pixel limit");
    if (image.channels != 1 && image.channels != 3 && image.channels != 4)
      finding("decode_edit_images returned an image with a bad channel count");
    if (image.pixels.size() != size_t{image.width} * image.height * image.channels)
      finding("decode_edit_images returned an image whose pixels do not match its size");
    if (convention == http::MaskConvention::transparent && image.channels == 4)
      finding("the OpenAI convention kept the image's alpha channel");
    if (mask.width == 0 || mask.height == 0 || mask.pixels.size() != size_t{mask.width} * mask.height * mask.channels)
      finding("decode_edit_images returned a mask whose pixels do not match its size");
    if (convention == http::MaskConvention::transparent) {  // converted once into an SDK mask
      if (mask.channels != 1) finding("the OpenAI convention returned a mask of more than one channel");
      for (const uint8_t value : mask.pixels)
        if (value != 0 && value != 255) finding("the OpenAI convention returned a mask value other than 0 or 255");
    }
    try {
      http::parse_size(form.size);  // images_edits parses it again
    } catch (const http::HttpError&) {
      finding("read_edit_form accepted a size that parse_size refuses");
    }
    const sdk::EditOptions options = http::edit_options_of(form);
    // b64_json answers encode with base64_encode: it must round-trip with the decoder.
    if (http::base64_decode(http::base64_encode(form.image)) != form.image)
      finding("base64_decode(base64_encode(image)) differs from the image");
    if (form.n < 1 || form.n > kLimits.max_images) finding("read_edit_form accepted n outside 1..max_images");
    if (options.steps < 0 || options.steps > 1000 || !(options.strength > 0 && options.strength <= 1))
      finding("edit_options_of returned steps or strength out of range");
    response.status = 202;
    response.set_content("{\"id\":\"edit_fuzz\"}", "application/json");
  } catch (const http::HttpError& error) {
    if (error.status() < 400 || error.status() > 599) finding("HttpError with a status that is not 4xx/5xx");
    response.status = error.status();
    response.set_content(error.json(), "application/json");  // messages quote user text: must not throw
  } catch (const sdk::Error& error) {
    response.status = http::http_status_of(error.status());
    response.set_content(error.what(), "text/plain");
  } catch (const std::exception& error) {
    std::fprintf(stderr, "fuzz_http_request: unexpected %s exception: %s\n", typeid(error).name(), error.what());
    finding("an exception other than HttpError / sdk::Error escaped the edit path");
  } catch (...) {
    finding("a non-std::exception escaped the edit path");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  HeadResult head = read_head(input, true);
  const HeadResult whole = read_head(input, false);
  if (head.state != whole.state || head.taken != whole.taken || head.error.status != whole.error.status ||
      head.request.method != whole.request.method || head.request.target != whole.request.target ||
      head.request.headers != whole.request.headers)
    finding("the request head reads differently in pieces and whole");
  if (head.state == http::RequestHeadReader::State::failed) {
    check_refusal(head.error, {400, 431, 505}, "a request head refused with an unexpected status");
    return 0;
  }
  if (head.state != http::RequestHeadReader::State::complete) return 0;  // the client would send more
  http::Request& request = head.request;
  if (request.path.empty() || (request.path[0] != '/' && request.path != "*"))
    finding("a request head was taken with a path that is not one");

  http::BodyFraming framing;
  if (const auto refusal = http::frame_body(request, kMaxBodyBytes, framing)) {
    check_refusal(*refusal, {400, 411, 413, 415, 501}, "a body framing refused with an unexpected status");
    return 0;
  }
  const std::string rest = input.substr(head.taken);
  if (framing.kind == http::BodyFraming::Kind::length) {
    if (framing.length > kMaxBodyBytes) finding("a Content-Length over the limit was taken");
    if (rest.size() < framing.length) return 0;  // the client would send more
    request.body = rest.substr(0, framing.length);
  } else if (framing.kind == http::BodyFraming::Kind::chunked) {
    ChunkedResult chunked = read_chunked(rest, true);
    const ChunkedResult chunked_whole = read_chunked(rest, false);
    if (chunked.state != chunked_whole.state || chunked.taken != chunked_whole.taken ||
        chunked.body != chunked_whole.body || chunked.status != chunked_whole.status)
      finding("a chunked body decodes differently in pieces and whole");
    if (chunked.state != http::ChunkedBodyReader::State::complete) return 0;
    request.body = std::move(chunked.body);
  }

  if (request.is_multipart_form_data()) {
    if (const auto refusal =
            http::parse_multipart(request.get_header_value("Content-Type"), request.body, kMultipartLimits, request.files)) {
      check_refusal(*refusal, {400}, "a multipart form refused with an unexpected status");
      return 0;
    }
    if (request.files.size() > static_cast<size_t>(kMultipartLimits.max_parts))
      finding("a multipart form was taken with more parts than the limit");
    request.body.clear();
  }
  http::Response response;
  if (request.method == "POST" && request.path == "/v1/images/edits")
    edit_route(request, response, http::MaskConvention::transparent);
  else if (request.method == "POST" && request.path == "/v1/edits")
    edit_route(request, response, http::MaskConvention::white);
  if (kVerbose && response.status > 0)
    std::fprintf(stderr, "%s %s -> %d %.300s\n", request.method.c_str(), request.path.c_str(), response.status,
                 response.body.c_str());
  return 0;
}
