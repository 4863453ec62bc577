#include "edit_requests.h"

#include "../load_client/load_media.h"

namespace abuse {

Media load_media(const Options& options) {
  Media media;
  media.image = read_file(options.image_path);
  media.mask = read_file(options.mask_path);
  if (!load_client::is_png(media.image) && !load_client::is_jpeg(media.image))
    usage(options.image_path + " is neither PNG nor JPEG");
  media.image_type = load_client::is_png(media.image) ? "png" : "jpeg";
  const auto size = load_client::image_size(media.image);
  if (!size) usage("cannot read the size of " + options.image_path);
  media.alpha_mask = load_client::alpha_mask_png(size->first, size->second);
  return media;
}

static void set_timeout(httplib::Client& client, double seconds, bool read) {
  const auto whole = time_t(seconds);
  const auto micros = time_t((seconds - double(whole)) * 1e6);
  if (read) client.set_read_timeout(whole, micros);
  else client.set_connection_timeout(whole, micros);
}

std::unique_ptr<httplib::Client> make_client(const Options& options, double connect_timeout, double read_timeout) {
  auto client = std::make_unique<httplib::Client>("127.0.0.1", options.port);
  set_timeout(*client, std::max(0.05, connect_timeout), false);
  set_timeout(*client, std::max(0.05, read_timeout), true);
  client->set_write_timeout(30, 0);
  if (!options.api_key.empty()) client->set_default_headers({{"Authorization", "Bearer " + options.api_key}});
  return client;
}

std::string outcome_of(const httplib::Result& result, int expected_status) {
  if (!result) {  // read: no answer within the read timeout (or the server closed without one)
    switch (result.error()) {
      case httplib::Error::Connection: return "transport_connect";
      case httplib::Error::ConnectionTimeout: return "transport_connect_timeout";
      case httplib::Error::Read: return "transport_read";
      case httplib::Error::Write: return "transport_write";
      default: return "transport_error_" + std::to_string(int(result.error()));
    }
  }
  if (result->status == expected_status) return "ok";
  std::string code;
  try {
    const json body = json::parse(result->body);
    if (body.at("error").at("code").is_string()) code = "_" + body["error"]["code"].get<std::string>();
  } catch (const std::exception&) {
  }
  return "http_" + std::to_string(result->status) + code;
}

httplib::Result post_openai_edit(httplib::Client& client, const Media& media, int steps, int seed) {
  const httplib::MultipartFormDataItems form = {
      {"image", media.image, media.image_type == "png" ? "image.png" : "image.jpg", "image/" + media.image_type},
      {"mask", media.alpha_mask, "mask.png", "image/png"},
      {"prompt", "a red barn in an autumn field", "", ""},
      {"response_format", "b64_json", "", ""},
      {"steps", std::to_string(steps), "", ""},
      {"seed", std::to_string(seed), "", ""},
  };
  return client.Post("/v1/images/edits", form);
}

std::string openai_edit_request(const Options& options, const Media& media, int steps, int seed) {
  const std::string boundary = "flashps-abuse-boundary-7d41";
  std::string body;
  auto part = [&](const std::string& name, const std::string& value, const std::string& file, const std::string& type) {
    body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + name + "\"";
    if (!file.empty()) body += "; filename=\"" + file + "\"\r\nContent-Type: " + type;
    body += "\r\n\r\n" + value + "\r\n";
  };
  part("image", media.image, media.image_type == "png" ? "image.png" : "image.jpg", "image/" + media.image_type);
  part("mask", media.alpha_mask, "mask.png", "image/png");
  part("prompt", "a red barn in an autumn field", "", "");
  part("response_format", "b64_json", "", "");
  part("steps", std::to_string(steps), "", "");
  part("seed", std::to_string(seed), "", "");
  body += "--" + boundary + "--\r\n";
  std::string head = "POST /v1/images/edits HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(options.port) +
                     "\r\nContent-Type: multipart/form-data; boundary=" + boundary +
                     "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n";
  if (!options.api_key.empty()) head += "Authorization: Bearer " + options.api_key + "\r\n";
  return head + "\r\n" + body;
}

static double seconds_until(Clock::time_point when) { return std::chrono::duration<double>(when - Clock::now()).count(); }

std::string native_edit(const Options& options, const Media& media, int seed, Clock::time_point give_up) {
  const json body = {{"image", load_client::base64_encode(media.image)},
                     {"mask", load_client::base64_encode(media.mask)},
                     {"steps", options.steps},
                     {"seed", seed},
                     {"prompt", "a red barn in an autumn field"}};
  auto client = make_client(options, std::min(10.0, seconds_until(give_up)), seconds_until(give_up));
  const httplib::Result submitted = client->Post("/v1/edits", body.dump(), "application/json");
  if (outcome_of(submitted, 202) != "ok") return outcome_of(submitted, 202);
  std::string id;
  try {
    id = json::parse(submitted->body).at("id").get<std::string>();
  } catch (const std::exception&) {
    return "bad_answer_no_id";
  }
  for (;;) {  // a fresh connection per poll: the server answers one request per connection
    if (seconds_until(give_up) <= 0) return "transport_read";
    auto poller = make_client(options, std::min(10.0, seconds_until(give_up)), seconds_until(give_up));
    const httplib::Result status = poller->Get("/v1/edits/" + id);
    if (outcome_of(status, 200) != "ok") return outcome_of(status, 200);
    try {
      const json view = json::parse(status->body);
      if (view.value("finished", false)) {
        if (view.value("outcome", "") != "done") return "edit_" + view.value("outcome", std::string("unknown"));
        break;
      }
    } catch (const std::exception&) {
      return "bad_answer_not_json";
    }
    sleep_seconds(0.1);
  }
  auto fetcher = make_client(options, std::min(10.0, seconds_until(give_up)), std::max(0.05, seconds_until(give_up)));
  return outcome_of(fetcher->Get("/v1/edits/" + id + "/result"), 200);
}

}  // namespace abuse
