#include "http/wire/message.h"

#include <strings.h>

#include <cctype>

namespace flashps::http {

bool CaseInsensitiveLess::operator()(const std::string& a, const std::string& b) const {
  return ::strcasecmp(a.c_str(), b.c_str()) < 0;
}

void ClientPresence::on_gone(std::function<void()> callback) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!gone_.load()) {
      callbacks_.push_back(std::move(callback));
      return;
    }
  }
  callback();
}

void ClientPresence::mark_gone() {
  std::vector<std::function<void()>> callbacks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (gone_.exchange(true)) return;
    callbacks.swap(callbacks_);
  }
  for (const auto& callback : callbacks) callback();
}

std::string Request::get_header_value(const std::string& name) const {
  const auto found = headers.find(name);
  return found == headers.end() ? std::string() : found->second;
}

std::string Request::get_param_value(const std::string& name) const {
  const auto found = params.find(name);
  return found == params.end() ? std::string() : found->second;
}

MultipartFormData Request::get_file_value(const std::string& name) const {
  const auto found = files.find(name);
  return found == files.end() ? MultipartFormData() : found->second;
}

bool Request::is_multipart_form_data() const {
  return ::strncasecmp(get_header_value("Content-Type").c_str(), "multipart/form-data", 19) == 0;
}

std::string Response::get_header_value(const std::string& name) const {
  const auto found = headers.find(name);
  return found == headers.end() ? std::string() : found->second;
}

void Response::set_header(const std::string& name, const std::string& value) {
  headers.erase(name);
  headers.emplace(name, value);
}

void Response::set_content(std::string content, const std::string& content_type) {
  body = std::move(content);
  set_header("Content-Type", content_type);
}

void Response::set_chunked_content_provider(const std::string& content_type, ContentProvider provider,
                                            ContentProviderResourceReleaser releaser) {
  set_header("Content-Type", content_type);
  content_provider = std::move(provider);
  content_provider_releaser = std::move(releaser);
}

namespace {

std::string percent_decoded(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

Params parse_query(const std::string& query) {
  Params params;
  size_t start = 0;
  while (start <= query.size()) {
    size_t end = query.find('&', start);
    if (end == std::string::npos) end = query.size();
    const std::string pair = query.substr(start, end - start);
    if (!pair.empty()) {
      const size_t equals = pair.find('=');
      params.emplace(percent_decoded(pair.substr(0, equals)),
                     equals == std::string::npos ? std::string() : percent_decoded(pair.substr(equals + 1)));
    }
    start = end + 1;
  }
  return params;
}

const char* status_reason(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: return "";
  }
}

}  // namespace flashps::http
