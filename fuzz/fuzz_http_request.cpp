// libFuzzer target for the untrusted-input path of an HTTP edit request: the input is the raw
// bytes a client sends on a connection, run through cpp-httplib's server-side parser (request
// line, headers, Content-Length / chunked / unframed body, Content-Encoding, multipart/form-data;
// up to 4 pipelined keep-alive requests) and then through the server's edit-form code
// (sdk/src/http/edit_form.cpp: read_edit_form -> decode_edit_images -> edit_options_of, with
// base64.cpp both ways, http_error.cpp, and the PNG / JPEG decoder behind
// flashps_image_decode_bounded, here fuzz/public_api_shim.cpp).
//
// Expected outcomes are an answer (any status) and, inside the routes, flashps::http::HttpError
// or flashps::sdk::Error. Any other exception escaping the routes aborts (httplib would catch it
// and answer 500, hiding it), as do a broken promise of decode_edit_images (pixel counts, the OpenAI
// convention's 0/255 mask; the native one hands the mask on as sent, for the SDK to read) and
// sanitizer reports. Seeds: fuzz/corpus/http_request/; dictionary: fuzz/fuzz_http_request.dict.
//
// httplib is Debian's compiled libcpp-httplib.so, built without sanitizers or coverage: libFuzzer
// is guided by the coverage of the SDK code (and sees httplib's heap use only through ASan's
// malloc interception), so the seeds and the dictionary carry the HTTP syntax.
//
// httplib 0.11.4 applies set_payload_max_length to Content-Length bodies only; chunked and
// unframed bodies, and Content-Encoding bodies once inflated, are read whole. Like the server's,
// this harness does not refuse those, so an input that inflates past -rss_limit_mb (a brotli body
// of a few KB can) is an out-of-memory finding against the server, not the harness.
#include <httplib.h>

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
#include "http/request_framing.h"

namespace {

namespace http = flashps::http;
namespace sdk = flashps::sdk;

// Small enough that no input can make the harness allocate gigabytes: 1 MiB bodies, 1 MP images.
// The prompt limit is lower than the server's (4000) so that inputs of libFuzzer's size reach it.
constexpr size_t kMaxBodyBytes = size_t{1} << 20;
const http::FormLimits kLimits{/*max_pixels=*/int64_t{1} << 20, /*max_prompt_chars=*/200, /*max_images=*/4};

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "fuzz_http_request: %s\n", what);
  std::fflush(stderr);
  std::abort();
}

// One client connection in memory: reads come from the fuzz input, writes (the answers) are
// dropped.
class MemoryStream final : public httplib::Stream {
 public:
  MemoryStream(const uint8_t* data, size_t size) : data_(reinterpret_cast<const char*>(data)), size_(size) {}

  bool is_readable() const override { return true; }  // a read never blocks: data or end of input
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, size_ - position_);
    std::copy(data_ + position_, data_ + position_ + n, ptr);
    position_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char*, size_t size) override { return static_cast<ssize_t>(size); }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 40000;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 8080;
  }
  socket_t socket() const override { return INVALID_SOCKET; }

  bool at_end() const { return position_ >= size_; }

 private:
  const char* data_;
  size_t size_;
  size_t position_ = 0;
};

// What both edit routes do with a request before the engine (openai_routes.cpp's images_edits,
// edit_routes.cpp's submit_edit), with the promises of decode_edit_images checked.
void edit_route(const httplib::Request& request, httplib::Response& response, http::MaskConvention convention) {
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

class FuzzServer final : public httplib::Server {
 public:
  FuzzServer() {
    set_payload_max_length(kMaxBodyBytes);
    // The server's own first check (http_server.cpp): bodies httplib 0.11 would read without a
    // limit (chunked, no length, compressed) are answered before they are read.
    set_pre_routing_handler([](const httplib::Request& request, httplib::Response& response) {
      if (const auto refusal = flashps::http::refuse_unbounded_body(request)) {
        response.status = refusal->status();
        response.set_content(refusal->json(), "application/json");
        return httplib::Server::HandlerResponse::Handled;
      }
      return httplib::Server::HandlerResponse::Unhandled;
    });
    Post("/v1/images/edits", [](const httplib::Request& request, httplib::Response& response) {
      edit_route(request, response, http::MaskConvention::transparent);
    });
    Post("/v1/edits", [](const httplib::Request& request, httplib::Response& response) {
      edit_route(request, response, http::MaskConvention::white);
    });
    // httplib answers 500 for an exception escaping routing; here that is a finding (the routes
    // catch everything they expect).
    set_exception_handler([](const httplib::Request&, httplib::Response&, std::exception_ptr) {
      finding("an exception escaped httplib's routing");
    });
    // FLASHPS_FUZZ_VERBOSE=1 prints each answer, to see what a seed or reproducer does.
    if (std::getenv("FLASHPS_FUZZ_VERBOSE")) {
      set_logger([](const httplib::Request& request, const httplib::Response& response) {
        std::fprintf(stderr, "%s %s -> %d %.300s\n", request.method.c_str(), request.path.c_str(), response.status,
                     response.body.c_str());
      });
    }
  }

  // httplib's keep-alive loop (process_server_socket_core) in short: up to 4 requests on one
  // connection, the last one answered with "Connection: close".
  void serve(MemoryStream& stream) {
    constexpr int kMaxRequests = 4;
    bool connection_closed = false;
    for (int i = 0; i < kMaxRequests && !connection_closed && !stream.at_end(); ++i) {
      if (!process_request(stream, /*close_connection=*/i + 1 == kMaxRequests, connection_closed, nullptr)) break;
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static FuzzServer* const server = new FuzzServer();  // never destroyed: no exit-time work
  MemoryStream stream(data, size);
  server->serve(stream);
  return 0;
}
