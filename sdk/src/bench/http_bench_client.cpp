#include "bench/http_bench_client.h"

#include <flashps/flashps.hpp>
#include <httplib.h>

#ifdef FLASHPS_HAVE_LIBCURL
#include <curl/curl.h>
#include <strings.h>  // strncasecmp: header names are case-insensitive
#endif

#include <chrono>
#include <memory>

namespace flashps::bench {
namespace {

namespace fps = flashps::sdk;

HttpAnswer post_with_httplib(int port, const std::string& path, const std::vector<FormPart>& parts) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(600, 0);
  client.set_tcp_nodelay(true);  // as the server does: no Nagle wait on the body's last segment
  httplib::MultipartFormDataItems form;
  for (const FormPart& part : parts) form.push_back({part.name, part.content, part.filename, part.content_type});
  const auto result = client.Post(path, form);
  if (!result) throw fps::Error(FLASHPS_IO_ERROR, "bench http: request failed: " + httplib::to_string(result.error()));
  return {result->status, result->body, result->get_header_value("Server-Timing")};
}

#ifdef FLASHPS_HAVE_LIBCURL
using Clock = std::chrono::steady_clock;

struct CurlCall {
  HttpAnswer answer;
  Clock::time_point start = Clock::now();
};

size_t append_body(char* data, size_t size, size_t count, void* call) {
  static_cast<CurlCall*>(call)->answer.body.append(data, size * count);
  return size * count;
}

size_t read_header(char* data, size_t size, size_t count, void* call_pointer) {
  CurlCall& call = *static_cast<CurlCall*>(call_pointer);
  // The status line is the answer's first byte. Taken here, not from CURLINFO_STARTTRANSFER_TIME,
  // which this libcurl (7.88) sets when a POST's upload starts.
  if (call.answer.first_byte_seconds < 0)
    call.answer.first_byte_seconds = std::chrono::duration<double>(Clock::now() - call.start).count();
  const std::string line(data, size * count);
  const std::string name = "server-timing:";
  if (line.size() > name.size() && strncasecmp(line.c_str(), name.c_str(), name.size()) == 0) {
    std::string value = line.substr(name.size());
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n')) value.pop_back();
    call.answer.server_timing = value.substr(value.find_first_not_of(' '));
  }
  return size * count;
}

HttpAnswer post_with_libcurl(int port, const std::string& path, const std::vector<FormPart>& parts) {
  const std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) throw fps::Error(FLASHPS_ERROR, "bench http: curl_easy_init failed");
  const std::unique_ptr<curl_mime, void (*)(curl_mime*)> mime(curl_mime_init(curl.get()), curl_mime_free);
  for (const FormPart& part : parts) {
    curl_mimepart* field = curl_mime_addpart(mime.get());
    curl_mime_name(field, part.name.c_str());
    curl_mime_data(field, part.content.data(), part.content.size());
    if (!part.filename.empty()) curl_mime_filename(field, part.filename.c_str());
    if (!part.content_type.empty()) curl_mime_type(field, part.content_type.c_str());
  }
  // No "Expect: 100-continue" round trip: httplib's client does not send one either.
  const std::unique_ptr<curl_slist, void (*)(curl_slist*)> headers(curl_slist_append(nullptr, "Expect:"),
                                                                   curl_slist_free_all);
  CurlCall call;
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + path;
  curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_MIMEPOST, mime.get());
  curl_easy_setopt(curl.get(), CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(curl.get(), CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM-based timeouts
  curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT, 600L);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, append_body);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &call);
  curl_easy_setopt(curl.get(), CURLOPT_HEADERFUNCTION, read_header);
  curl_easy_setopt(curl.get(), CURLOPT_HEADERDATA, &call);
  const CURLcode code = curl_easy_perform(curl.get());
  if (code != CURLE_OK)
    throw fps::Error(FLASHPS_IO_ERROR, std::string("bench http: request failed: ") + curl_easy_strerror(code));
  HttpAnswer& answer = call.answer;
  answer.total_seconds = std::chrono::duration<double>(Clock::now() - call.start).count();
  long status = 0;
  curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &status);
  answer.status = static_cast<int>(status);
  curl_off_t connected_microseconds = -1;
  if (curl_easy_getinfo(curl.get(), CURLINFO_CONNECT_TIME_T, &connected_microseconds) == CURLE_OK)
    answer.connected_seconds = connected_microseconds / 1e6;
  return std::move(call.answer);
}
#endif

}  // namespace

const char* client_name(HttpClientKind kind) { return kind == HttpClientKind::libcurl ? "libcurl" : "httplib"; }

bool client_available(HttpClientKind kind) {
#ifdef FLASHPS_HAVE_LIBCURL
  return true;
#else
  return kind == HttpClientKind::httplib;
#endif
}

HttpAnswer post_form(HttpClientKind kind, int port, const std::string& path, const std::vector<FormPart>& parts) {
#ifdef FLASHPS_HAVE_LIBCURL
  if (kind == HttpClientKind::libcurl) return post_with_libcurl(port, path, parts);
#endif
  if (kind != HttpClientKind::httplib)
    throw fps::Error(FLASHPS_UNSUPPORTED, "bench http: this build has no libcurl (Debian: libcurl4-openssl-dev)");
  return post_with_httplib(port, path, parts);
}

}  // namespace flashps::bench
