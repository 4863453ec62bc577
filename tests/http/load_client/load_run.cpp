#include "load_run.h"

namespace load_client {

std::string excerpt(const std::string& body) {
  std::string text = body.substr(0, 300);
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 32 || static_cast<unsigned char>(c) > 126) c = '?';
  return text;
}

std::string error_code(const std::string& body) {
  try {
    const json parsed = json::parse(body);
    const json& code = parsed.at("error").at("code");
    return code.is_string() ? code.get<std::string>() : "null";
  } catch (const std::exception&) {
    return "(no JSON error)";
  }
}

std::unique_ptr<httplib::Client> make_client(const Run& run, double read_timeout_seconds) {
  auto client = std::make_unique<httplib::Client>("127.0.0.1", run.args.port);
  client->set_connection_timeout(10, 0);
  const auto whole = static_cast<time_t>(read_timeout_seconds);
  client->set_read_timeout(whole, static_cast<time_t>((read_timeout_seconds - double(whole)) * 1e6));
  client->set_write_timeout(30, 0);
  return client;
}


}  // namespace load_client
