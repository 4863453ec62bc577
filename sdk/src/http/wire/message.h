// The server's view of one HTTP exchange: the request as read off the wire (head, body, the parts
// of a multipart form) and the answer a route writes. Member names follow cpp-httplib's, which
// the routes were written against, so route code reads the same.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <string>
#include <utility>
#include <vector>

namespace flashps::http {

// Header names compare without case (RFC 9110 5.1).
struct CaseInsensitiveLess {
  bool operator()(const std::string& a, const std::string& b) const;
};
using Headers = std::multimap<std::string, std::string, CaseInsensitiveLess>;

struct MultipartFormData {
  std::string name, content, filename, content_type;
};
using MultipartFormDataMap = std::multimap<std::string, MultipartFormData>;
using Params = std::multimap<std::string, std::string>;

// Whether the client is still there while its request is served: the connection loop sets it
// when the socket reports the peer's close or reset, and runs the callbacks routes registered.
class ClientPresence {
 public:
  bool gone() const { return gone_.load(); }
  // Runs `callback` once when the client goes (at once, on this thread, if it has gone already).
  void on_gone(std::function<void()> callback);
  void mark_gone();  // the connection loop

 private:
  std::atomic<bool> gone_{false};
  std::mutex mutex_;
  std::vector<std::function<void()>> callbacks_;
};

struct Request {
  using Clock = std::chrono::steady_clock;
  std::string method, target, path, version, body, remote_addr;
  Headers headers;
  Params params;               // the query string's, percent-decoded
  MultipartFormDataMap files;  // filled for multipart/form-data bodies
  std::smatch matches;         // the route pattern's groups
  // When the connection was accepted, its head and its body were complete, and a worker took it.
  Clock::time_point accepted_at, head_read_at, body_read_at, started_at;
  std::shared_ptr<ClientPresence> presence = std::make_shared<ClientPresence>();

  bool has_header(const std::string& name) const { return headers.find(name) != headers.end(); }
  std::string get_header_value(const std::string& name) const;
  bool is_multipart_form_data() const;
  bool has_param(const std::string& name) const { return params.find(name) != params.end(); }
  std::string get_param_value(const std::string& name) const;
  bool has_file(const std::string& name) const { return files.find(name) != files.end(); }
  MultipartFormData get_file_value(const std::string& name) const;
  bool client_gone() const { return presence->gone(); }
};

// Where a streamed answer's provider writes. write() is false once the client is gone or a write
// failed; done() ends the stream.
struct DataSink {
  std::function<bool(const char* data, size_t size)> write;
  std::function<void()> done;
  std::function<bool()> is_writable;
};
// Called until it returns false or calls sink.done(); `offset` is the bytes written so far.
using ContentProvider = std::function<bool(size_t offset, DataSink& sink)>;
// Called once the stream ended: true when it ended by done() with every byte written.
using ContentProviderResourceReleaser = std::function<void(bool success)>;

struct Response {
  int status = -1;
  Headers headers;
  std::string body;
  ContentProvider content_provider;  // set: the body is streamed in chunks
  ContentProviderResourceReleaser content_provider_releaser;
  // Called when the answer could not be written in full (the client went away first, or stopped
  // reading): what the route made for the client and only it would find is cancelled there.
  std::function<void()> on_undelivered;

  bool has_header(const std::string& name) const { return headers.find(name) != headers.end(); }
  std::string get_header_value(const std::string& name) const;
  // Replaces a header of that name.
  void set_header(const std::string& name, const std::string& value);
  void set_content(std::string content, const std::string& content_type);
  void set_chunked_content_provider(const std::string& content_type, ContentProvider provider,
                                    ContentProviderResourceReleaser releaser = nullptr);
};

// The query string's parameters ("a=1&b=%20x" -> a: 1, b: " x").
Params parse_query(const std::string& query);

// "Not Found" for 404, ...; "" for a status without a reason phrase here.
const char* status_reason(int status);

}  // namespace flashps::http
