// The ordinary requests: an HTTP client with the key, one edit on either route, and what an
// answer or a failure is called in the report.
#pragma once
#include <httplib.h>

#include <memory>

#include "abuse.h"

namespace abuse {

struct Media {
  std::string image, image_type;  // png or jpeg
  std::string mask;               // white-on-black, for the native route
  std::string alpha_mask;         // transparent = edit, for the OpenAI route (made to the image's size)
};
Media load_media(const Options& options);

// A client for 127.0.0.1:port sending the API key (if any); timeouts in seconds.
std::unique_ptr<httplib::Client> make_client(const Options& options, double connect_timeout, double read_timeout);

// "ok" for the expected status, else "http_<status>[_<error.code>]" or "transport_<error>".
std::string outcome_of(const httplib::Result& result, int expected_status);

// POST /v1/images/edits (multipart, b64_json): blocks until the image is ready.
httplib::Result post_openai_edit(httplib::Client& client, const Media& media, int steps, int seed);

// The same edit as raw bytes (head with the key and body), for a client that sends it on a socket
// of its own and hangs up.
std::string openai_edit_request(const Options& options, const Media& media, int steps, int seed);

// The native route: POST /v1/edits (202), poll GET /v1/edits/{id} until finished, GET the result.
// Returns "ok" or the outcome of the first request that went wrong; gives up at `give_up`.
std::string native_edit(const Options& options, const Media& media, int seed, Clock::time_point give_up);

}  // namespace abuse
