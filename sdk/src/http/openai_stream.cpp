#include "http/openai_stream.h"

#include <algorithm>
#include <ctime>
#include <nlohmann/json.hpp>

#include "http/base64.h"
#include "http/http_error.h"
#include "http/responses.h"

namespace flashps::http {
namespace {

using nlohmann::json;

struct StreamState {
  bool started = false;
  uint64_t seen_version = 0;
  size_t partials_sent = 0;
};

// One event; the image goes in by hand (base64 needs no escaping, and can be megabytes).
std::string image_event(const std::string& type, const std::string& image, json fields) {
  fields["type"] = type;
  const std::string rest = fields.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string event = "event: " + type + "\ndata: {\"b64_json\":\"";
  event.reserve(event.size() + image.size() * 4 / 3 + rest.size() + 16);
  base64_append(event, image);
  event += "\",";
  event += rest.substr(1);  // the fields without their opening brace
  event += "\n\n";
  return event;
}

}  // namespace

void check_stream_form(const EditForm& form) {
  if (form.n != 1)
    throw HttpError(400, "stream=true makes one image per request; n is " + std::to_string(form.n), "n");
  if (form.response_format == "url")
    throw HttpError(400, "stream=true sends the images in its events (b64_json); response_format=url is not supported",
                    "response_format");
}

int preview_every_steps(int steps, int partial_images) {
  if (partial_images <= 0) return 0;
  return std::max(1, steps / (partial_images + 1));
}

void stream_image_edit(Response& response, std::shared_ptr<EditJob> job, StreamedImage image) {
  const json common = {{"size", image.size},
                       {"quality", "auto"},         // no quality levels here
                       {"background", "opaque"},    // results are opaque (the image's alpha is dropped)
                       {"output_format", image.output_format},
                       {"created_at", static_cast<int64_t>(std::time(nullptr))}};
  auto state = std::make_shared<StreamState>();
  response.status = 200;
  response.set_header("Cache-Control", "no-cache");
  response.set_header("X-Accel-Buffering", "no");
  response.set_chunked_content_provider(
      "text/event-stream", [job = std::move(job), common, state](size_t, DataSink& sink) {
        // The current state at once, then each change; a comment every 10 s keeps proxies from
        // closing a quiet stream and finds clients that went away.
        const JobView view = state->started ? job->wait_change(state->seen_version, 10.0) : job->view();
        const bool changed = !state->started || view.version != state->seen_version;
        state->started = true;
        state->seen_version = view.version;
        const auto partials = job->partial_images();
        for (; state->partials_sent < partials.size(); ++state->partials_sent) {
          json fields = common;
          fields["partial_image_index"] = state->partials_sent;
          const std::string event = image_event("image_edit.partial_image", *partials[state->partials_sent], fields);
          if (!sink.write(event.data(), event.size())) return false;
        }
        if (view.finished) {
          std::string event;
          if (view.outcome == FLASHPS_OK) {
            json fields = common;
            // No token accounting here: zeros, in the shape the clients expect.
            fields["usage"] = {{"input_tokens", 0},
                               {"input_tokens_details", {{"image_tokens", 0}, {"text_tokens", 0}}},
                               {"output_tokens", 0},
                               {"total_tokens", 0}};
            event = image_event("image_edit.completed", *job->result(), fields);
          } else {
            const HttpError error(view.http_status, view.error.empty() ? "the edit did not finish" : view.error, "",
                                  outcome_name(view));
            event = "event: error\ndata: " + error.json() + "\n\n";
          }
          if (!sink.write(event.data(), event.size())) return false;
          sink.done();
          return true;
        }
        if (!changed) return sink.write(": keep-alive\n\n", 14);
        return true;
      });
}

}  // namespace flashps::http
