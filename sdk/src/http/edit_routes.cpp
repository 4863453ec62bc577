// The native edit API: POST /v1/edits (JSON with base64 images, or multipart; white mask pixels
// regenerate) answers 202 with an id at once; GET /v1/edits/{id} its status with step/steps;
// GET /v1/edits/{id}/events a Server-Sent Events stream of its progress; DELETE /v1/edits/{id}
// cancels; GET /v1/edits/{id}/result the image; GET /v1/edits the recent edits. An edit is not
// tied to its client's connection once the 202 with its id was written; before, it is.
#include "http/router.h"

#include <climits>

#include "http/responses.h"
#include "http/server_context.h"

namespace flashps::http {
namespace {

using nlohmann::json;

constexpr const char* kIdPattern = "/v1/edits/(edit_[0-9a-f]{16})";

std::shared_ptr<EditJob> find_job(ServerContext& context, const Request& request) {
  const std::string id = request.matches[1];
  auto job = context.jobs->find(id);
  if (!job) throw HttpError(404, "no edit " + id + " (unknown, or finished long enough ago to be forgotten)", "id", "edit_not_found");
  return job;
}

std::string base_url_of(const Request& request, const ServerContext& context) {
  return ServerContext::base_url(request.get_header_value("Host"), context.port);
}

void submit_edit(const Request& request, Response& response, ServerContext& context) {
  context.check_accepting();
  const EditForm form = read_edit_form(request, context.options.limits);
  if (form.n != 1) throw HttpError(422, "the native API makes one image per edit; submit several edits", "n");
  if (form.stream)
    throw HttpError(400, "stream is for POST /v1/images/edits; the native API streams an edit's progress at "
                         "GET /v1/edits/{id}/events", "stream");
  const sdk::EditOptions options = edit_options_of(form);  // the settings first: they cost nothing to check
  const EditImages images = decode_edit_images(form, context.options.limits, MaskConvention::white);
  const auto submit = [&] {
    return std::vector<std::shared_ptr<EditJob>>{
        context.jobs->submit(images, options, form.deadline_seconds, form.output_format)};
  };
  // With an Idempotency-Key, a retry answers with the edit the key started (idempotency_keys.h).
  const std::string key = idempotency_key_of(request);
  IdempotentEdits edits{};
  if (key.empty()) {
    edits.jobs = submit();
  } else {
    edits = context.idempotency_keys->claim(idempotency_scope_of(request, !context.options.keys.empty()), key,
                                            request_fingerprint("/v1/edits", form), submit);
    if (edits.replayed) response.set_header("Idempotent-Replayed", "true");
  }
  const auto& job = edits.jobs.front();
  // The edit's id reaches its client in this answer: when it cannot be written (the client went
  // away meanwhile), nobody can find the edit, and it stops at its next step, unless a retry with
  // the same Idempotency-Key joins it within the grace. A delivered answer keeps its waiter for
  // good: someone knows the id.
  job->add_waiter();
  const double grace = key.empty() ? 0 : kIdempotentRetryGraceSeconds;
  response.on_undelivered = [job, grace, &metrics = context.metrics] {
    if (!job->release_waiter(grace)) return;
    job->cancel();
    ++metrics.cancelled_client_gone;
  };
  const std::string base_url = base_url_of(request, context);
  response.set_header("Location", "/v1/edits/" + job->id());
  respond_json(response, 202, job_json(job->view(), base_url));
}

void edit_result(const Request& request, Response& response, ServerContext& context) {
  const auto job = find_job(context, request);
  const JobView view = job->view();
  if (!view.finished)
    throw HttpError(409, "edit " + view.id + " is " + outcome_name(view) + " (step " + std::to_string(view.step) + " of " +
                             std::to_string(view.steps) + "): its result is not ready",
                    "id", "not_finished");
  if (view.outcome != FLASHPS_OK)
    throw HttpError(view.outcome == FLASHPS_CANCELLED ? 409 : view.http_status,
                    "edit " + view.id + " " + outcome_name(view) + (view.error.empty() ? "" : ": " + view.error), "id",
                    outcome_name(view));
  const auto bytes = job->result();
  response.status = 200;
  response.set_content(*bytes, view.output_format == "jpeg" ? "image/jpeg" : "image/png");
}

// One event per change of the job; the stream ends after the finished job's event. A comment
// every 10 s keeps proxies from closing an idle stream and finds clients that went away.
void edit_events(const Request& request, Response& response, ServerContext& context) {
  const auto job = find_job(context, request);
  const std::string base_url = base_url_of(request, context);
  auto seen = std::make_shared<uint64_t>(UINT64_MAX);  // MAX: send the current state first
  response.set_header("Cache-Control", "no-cache");
  response.set_header("X-Accel-Buffering", "no");
  response.set_chunked_content_provider(
      "text/event-stream", [job, base_url, seen](size_t, DataSink& sink) {
        const JobView view = *seen == UINT64_MAX ? job->view() : job->wait_change(*seen, 10.0);
        if (*seen != UINT64_MAX && view.version == *seen && !view.finished) {
          return sink.write(": keep-alive\n\n", 14);
        }
        *seen = view.version;
        const std::string event = "event: " + outcome_name(view) + "\nid: " + std::to_string(view.version) +
                                  "\ndata: " + job_json(view, base_url).dump() + "\n\n";
        if (!sink.write(event.data(), event.size())) return false;
        if (view.finished) sink.done();
        return true;
      });
}

}  // namespace

void add_edit_routes(Router& server, ServerContext& context) {
  server.Post("/v1/edits", guarded([&context](const Request& request, Response& response) {
                submit_edit(request, response, context);
              }));
  server.Get("/v1/edits", guarded([&context](const Request& request, Response& response) {
               json list = json::array();
               for (const JobView& view : context.jobs->list(1000)) list.push_back(job_json(view, base_url_of(request, context)));
               respond_json(response, 200, {{"object", "list"}, {"data", list}});
             }));
  server.Get(kIdPattern, guarded([&context](const Request& request, Response& response) {
               respond_json(response, 200, job_json(find_job(context, request)->view(), base_url_of(request, context)));
             }));
  server.Delete(kIdPattern, guarded([&context](const Request& request, Response& response) {
                  const auto job = find_job(context, request);
                  job->cancel();
                  job->wait_finished(2.0);  // a cancel lands at the next step boundary: usually at once
                  respond_json(response, 200, job_json(job->view(), base_url_of(request, context)));
                }));
  server.Get(std::string(kIdPattern) + "/result",
             guarded([&context](const Request& request, Response& response) {
               edit_result(request, response, context);
             }));
  server.Get(std::string(kIdPattern) + "/events",
             guarded([&context](const Request& request, Response& response) {
               edit_events(request, response, context);
             }));
}

}  // namespace flashps::http
