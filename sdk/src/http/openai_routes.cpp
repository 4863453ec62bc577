// OpenAI-compatible routes: POST /v1/images/edits (multipart: image, mask, prompt, n, size,
// response_format, model, stream, partial_images; the mask's fully transparent pixels mark the
// region to edit; stream=true answers with events, openai_stream.h) and
// GET /v1/models, answering in that API's shapes so its client libraries work unchanged.
#include "http/router.h"

#include <chrono>
#include <ctime>
#include <random>

#include "http/base64.h"
#include "http/openai_stream.h"
#include "http/responses.h"
#include "http/server_context.h"

namespace flashps::http {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

uint64_t random_seed() {
  static std::mutex mutex;
  static std::mt19937_64 generator{std::random_device{}()};
  std::lock_guard<std::mutex> lock(mutex);
  return generator() >> 1;  // within int64 for clients that print it
}

// The request's edits: `submit`ted, or with an Idempotency-Key those the key started, running or
// finished (idempotency_keys.h). A joined edit that ends cancelled (its first client went away)
// is started anew for this request, at most twice, as each needs another cancel. A stream joins
// without waiting: a cancel reaches it as its error event.
std::vector<std::shared_ptr<EditJob>> submit_or_join(const Request& request, Response& response,
                                                     ServerContext& context, const EditForm& form,
                                                     const IdempotencyKeys::Submit& submit) {
  const std::string key = idempotency_key_of(request);
  if (key.empty()) return submit();
  for (int attempt = 0;; ++attempt) {
    IdempotentEdits edits = context.idempotency_keys->claim(
        idempotency_scope_of(request, !context.options.keys.empty()), key,
        request_fingerprint("/v1/images/edits", form), submit);
    if (edits.replayed) response.set_header("Idempotent-Replayed", "true");
    if (!edits.replayed || form.stream || attempt == 2) return edits.jobs;
    bool cancelled = false;
    for (const auto& job : edits.jobs) {
      job->wait_finished(-1);
      cancelled |= job->view().outcome == FLASHPS_CANCELLED;
    }
    if (!cancelled) return edits.jobs;
    context.check_accepting();
  }
}

void images_edits(const Request& request, Response& response, ServerContext& context) {
  // Before the request reached this route: its head and body arriving, then waiting for a worker.
  const auto between = [](Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration<double>(to - from).count();
  };
  const double headers_seconds = between(request.accepted_at, request.head_read_at);
  const double receive_seconds = between(request.head_read_at, request.body_read_at);
  const double wait_seconds = between(request.body_read_at, request.started_at);
  context.check_accepting();
  const auto start = Clock::now();
  EditForm form = read_edit_form(request, context.options.limits);
  sdk::EditOptions options = edit_options_of(form);  // the settings first: they cost nothing to check
  const EditImages images = decode_edit_images(form, context.options.limits, MaskConvention::transparent);
  if (const auto size = parse_size(form.size);
      size && (size->first != static_cast<int>(images.image.width) || size->second != static_cast<int>(images.image.height)))
    throw HttpError(422, "size " + form.size + " differs from the image's " + std::to_string(images.image.width) + "x" +
                             std::to_string(images.image.height) +
                             ": this server edits at the image's own size (omit size, or send auto)",
                    "size", "unsupported_size");
  const double decode_seconds = seconds_since(start);
  if (form.stream) check_stream_form(form);
  const int partial_images = form.stream ? form.partial_images : 0;
  const int preview_every =
      preview_every_steps(options.steps > 0 ? options.steps : context.model.default_steps, partial_images);

  const uint64_t first_seed = form.seed ? *form.seed : random_seed();
  const auto submit = [&] {
    std::vector<std::shared_ptr<EditJob>> jobs;
    try {
      for (int i = 0; i < form.n; ++i) {
        options.seed = first_seed + static_cast<uint64_t>(i);
        jobs.push_back(context.jobs->submit(images, options, form.deadline_seconds, form.output_format,
                                            partial_images, preview_every));
      }
    } catch (...) {
      for (const auto& job : jobs) job->cancel();  // all n or none
      throw;
    }
    return jobs;
  };
  const std::vector<std::shared_ptr<EditJob>> jobs = submit_or_join(request, response, context, form, submit);
  const std::string ids = [&] {
    std::string text;
    for (const auto& job : jobs) text += (text.empty() ? "" : ",") + job->id();
    return text;
  }();
  response.set_header("X-Flashps-Edit-Ids", ids);
  // Nobody reads the answer of a client that went away: its edits stop at their next step,
  // unless another request (a retry with the same Idempotency-Key) waits for them too. An edit
  // with a key waits kIdempotentRetryGraceSeconds for that retry before it stops.
  for (const auto& job : jobs) job->add_waiter();
  const double grace = idempotency_key_of(request).empty() ? 0 : kIdempotentRetryGraceSeconds;
  request.presence->on_gone([jobs, grace, &metrics = context.metrics] {
    for (const auto& job : jobs) {
      if (!job->release_waiter(grace)) continue;
      job->cancel();
      ++metrics.cancelled_client_gone;
    }
  });
  if (form.stream) {
    stream_image_edit(response, jobs.front(),
                      {std::to_string(images.image.width) + "x" + std::to_string(images.image.height),
                       form.output_format.empty() ? "png" : form.output_format});
    return;
  }

  double edit_seconds = 0, encode_seconds = 0, finish_seconds = 0;
  const std::string base_url = ServerContext::base_url(request.get_header_value("Host"), context.port);
  for (const auto& job : jobs) job->wait_finished(-1);
  const auto answer_start = Clock::now();
  // The answer is written by hand, once, into a buffer sized up front: the images are most of it,
  // and base64 needs no JSON escaping, so each is encoded in place instead of being copied and
  // scanned by a JSON serializer.
  std::vector<JobView> views;
  std::vector<std::shared_ptr<const std::string>> results;
  size_t answer_size = 256;
  for (const auto& job : jobs) {
    views.push_back(job->view());
    const JobView& view = views.back();
    if (view.outcome != FLASHPS_OK) {
      for (const auto& other : jobs) other->cancel();
      throw HttpError(view.http_status, view.error.empty() ? "the edit did not finish" : view.error, "",
                      outcome_name(view));
    }
    edit_seconds = std::max(edit_seconds, view.seconds);
    encode_seconds += view.encode_seconds;
    finish_seconds = std::max(finish_seconds, view.finish_seconds);
    if (form.response_format != "url") {
      results.push_back(job->result());
      answer_size += base64_encoded_size(results.back()->size()) + 16;
    }
  }
  const json fields = {{"model", context.model_name},
                       {"output_format", form.output_format.empty() ? "png" : form.output_format}};
  const std::string rest = fields.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string body;
  body.reserve(answer_size + rest.size() + views.size() * (base_url.size() + 64));
  body += "{\"created\":" + std::to_string(static_cast<int64_t>(std::time(nullptr))) + ",\"data\":[";
  for (size_t i = 0; i < views.size(); ++i) {
    body += i == 0 ? "" : ",";
    if (form.response_format == "url") {
      body += json{{"url", base_url + "/v1/edits/" + views[i].id + "/result"}}.dump();
    } else {
      body += "{\"b64_json\":\"";
      base64_append(body, *results[i]);
      body += "\"}";
    }
  }
  body += "],";
  body += rest.substr(1);  // the fields' object without its opening brace
  // The server's own part of the latency, so a client can tell HTTP overhead from edit time.
  // headers: from the connection's accept to its request head's end; receive: the body arriving;
  // wait: the complete request waiting for a worker, and its multipart form being parsed; edit: submission
  // to the engine's last event; finish: from there to the encoded result, less the encoding
  // (event delivery, the result's hand-over); answer: base64 and the JSON around it.
  char timing[384];
  std::snprintf(timing, sizeof timing,
                "wait;dur=%.3f, headers;dur=%.3f, receive;dur=%.3f, decode;dur=%.3f, edit;dur=%.3f, finish;dur=%.3f, "
                "encode;dur=%.3f, answer;dur=%.3f",
                wait_seconds * 1e3, headers_seconds * 1e3, receive_seconds * 1e3, decode_seconds * 1e3,
                edit_seconds * 1e3, finish_seconds * 1e3, encode_seconds * 1e3, seconds_since(answer_start) * 1e3);
  response.set_header("Server-Timing", timing);
  response.status = 200;
  response.set_content(std::move(body), "application/json");
}

}  // namespace

void add_openai_routes(Router& server, ServerContext& context) {
  server.Post("/v1/images/edits",
              guarded([&context](const Request& request, Response& response) {
                images_edits(request, response, context);
              }));
  server.Get("/v1/models", guarded([&context](const Request&, Response& response) {
               respond_json(response, 200,
                            {{"object", "list"},
                             {"data", json::array({{{"id", context.model_name},
                                                    {"object", "model"},
                                                    {"created", 0},
                                                    {"owned_by", "flashps"}}})}});
             }));
}

}  // namespace flashps::http
