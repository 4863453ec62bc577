// The HTTP clients `bench http` times: the same multipart POST through cpp-httplib's client and,
// when the build found it, libcurl's (what `curl` is). Two clients, because the client's own work
// (building the form, reading a megabyte of answer) is part of every measured latency: httplib's
// reads 4 KB per call with a poll before each, libcurl reads in 16+ KB pieces as most clients do.
#pragma once
#include <string>
#include <vector>

namespace flashps::bench {

struct FormPart {
  std::string name, content, filename, content_type;  // filename empty: a plain field
};

struct HttpAnswer {
  int status = 0;
  std::string body;
  std::string server_timing;  // the Server-Timing header
  // With libcurl's client (-1 with httplib's), seconds from the start of the call until:
  double connected_seconds = -1;   // the TCP handshake was done (libcurl's CURLINFO_CONNECT_TIME_T)
  double first_byte_seconds = -1;  // the answer's first byte came
  double total_seconds = -1;       // its last byte came
};

enum class HttpClientKind { httplib, libcurl };
const char* client_name(HttpClientKind kind);
bool client_available(HttpClientKind kind);

// A fresh connection per call (as one-shot clients do). Throws flashps::sdk::Error when the
// request does not complete.
HttpAnswer post_form(HttpClientKind kind, int port, const std::string& path, const std::vector<FormPart>& parts);

}  // namespace flashps::bench
