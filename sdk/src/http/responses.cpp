#include "http/responses.h"

#include <flashps/flashps.hpp>
#include "http/router.h"

#include <memory>

#include "http/edit_jobs.h"

namespace flashps::http {

void respond_json(Response& response, int status, const nlohmann::json& body) {
  response.status = status;
  response.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
}

void respond_error(Response& response, const HttpError& error) {
  response.status = error.status();
  if (error.status() == 401) response.set_header("WWW-Authenticate", "Bearer");
  if (error.status() == 429 || error.status() == 503) response.set_header("Retry-After", "1");
  response.set_content(error.json(), "application/json");
}

Route guarded(Route route) {
  return [route = std::move(route)](const Request& request, Response& response) {
    try {
      route(request, response);
    } catch (const HttpError& error) {
      respond_error(response, error);
    } catch (const sdk::Error& error) {
      respond_error(response, HttpError(http_status_of(error.status()), error.what()));
    } catch (const std::bad_alloc&) {
      respond_error(response, HttpError(503, "out of memory answering this request; retry later"));
    } catch (const std::exception& error) {
      respond_error(response, HttpError(500, std::string("internal error: ") + error.what()));
    }
  };
}

std::string outcome_name(const JobView& view) {
  if (!view.finished) return flashps_request_status_name(view.status);
  switch (view.outcome) {
    case FLASHPS_OK: return "done";
    case FLASHPS_CANCELLED: return "cancelled";
    case FLASHPS_DEADLINE_EXCEEDED: return "deadline_exceeded";
    default: return "failed";
  }
}

nlohmann::json job_json(const JobView& view, const std::string& base_url) {
  nlohmann::json body = {{"id", view.id},
                         {"object", "edit"},
                         {"status", flashps_request_status_name(view.status)},
                         {"finished", view.finished},
                         {"step", view.step},
                         {"steps", view.steps},
                         {"seconds", view.seconds},
                         {"worker", view.worker},
                         {"status_url", base_url + "/v1/edits/" + view.id},
                         {"events_url", base_url + "/v1/edits/" + view.id + "/events"},
                         {"result_url", base_url + "/v1/edits/" + view.id + "/result"}};
  if (view.finished) body["outcome"] = outcome_name(view);
  if (!view.error.empty()) body["error"] = view.error;
  if (view.finished && view.outcome == FLASHPS_OK) {
    const sdk::EditStats& stats = view.stats;
    body["stats"] = {{"total_seconds", stats.total_seconds},
                     {"denoise_seconds", stats.denoise_seconds},
                     {"mask_ratio", stats.mask_ratio},
                     {"cache_hit", stats.cache_hit},
                     {"prompt_cache_hit", stats.prompt_cache_hit},
                     {"cache_mode", sdk::cache_mode_name(stats.mode_used)},
                     {"cache_bytes", stats.cache_bytes},
                     {"steps_run", stats.steps_run},
                     {"compute_saving", stats.compute_saving},
                     {"notes", stats.notes},
                     {"template_hash", stats.template_hash}};
  }
  return body;
}

}  // namespace flashps::http
