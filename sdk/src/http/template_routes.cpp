// Templates: POST /v1/templates runs a template in full and captures it (later edits of that image
// reuse it: the mask-aware cache); GET /v1/templates lists the store's captures; DELETE
// /v1/templates/{hash prefix} removes them. The store is reached only through the SDK. A capture
// whose client disconnects is cancelled; a drain waits for captures as for edits.
#include "http/router.h"

#include <atomic>
#include <chrono>

#include "http/responses.h"
#include "http/server_context.h"

namespace flashps::http {
namespace {

using nlohmann::json;

sdk::Store store_of(ServerContext& context) {
  if (!context.options.store) throw HttpError(501, "this server has no activation store to list", "", "no_store");
  return sdk::Store::borrow(context.options.store);
}

void register_template(const Request& request, Response& response, ServerContext& context) {
  context.check_accepting();
  const EditForm form = read_edit_form(request, context.options.limits);
  const sdk::EditOptions options = edit_options_of(form);  // the settings first: they cost nothing to check
  // With a mask, decode_edit_images reads both (the mask as sent, for the SDK); else the image alone.
  EditImages images;
  if (form.mask.empty()) images.image = decode_image_field(form.image, "image", context.options.limits);
  else images = decode_edit_images(form, context.options.limits, MaskConvention::white);
  const sdk::Image& image = images.image;
  const sdk::Image& mask = images.mask;
  // A capture pauses the engine's edits while it runs: one whose client went away, or that a
  // drain out of time cancels, stops at its next step (the progress callback says so).
  sdk::EditOptions capture_options = options;
  const auto presence = request.presence;
  bool client_gone = false;
  capture_options.progress = [&](const std::string&, int, int, double) {
    client_gone = presence->gone();
    return !client_gone && !context.cancel_captures.load();
  };
  ++context.metrics.captures_running;
  struct Running {
    std::atomic<int>& count;
    ~Running() { --count; }
  } running{context.metrics.captures_running};
  const auto start = std::chrono::steady_clock::now();
  sdk::EditStats stats;
  try {
    stats = context.engine.register_template(image, form.mask.empty() ? nullptr : &mask, capture_options);
  } catch (const sdk::Error& error) {
    if (error.status() == FLASHPS_CANCELLED && client_gone) ++context.metrics.cancelled_client_gone;
    throw;
  }
  respond_json(response, stats.template_hash.empty() ? 200 : 201,
               {{"object", "template"},
                {"template_hash", stats.template_hash},
                {"cache_bytes", stats.cache_bytes},
                {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()},
                {"notes", stats.notes}});
}

}  // namespace

void add_template_routes(Router& server, ServerContext& context) {
  server.Post("/v1/templates", guarded([&context](const Request& request, Response& response) {
                register_template(request, response, context);
              }));
  server.Get("/v1/templates", guarded([&context](const Request&, Response& response) {
               json list = json::array();
               for (const sdk::CaptureInfo& capture : store_of(context).list())
                 list.push_back({{"template_hash", capture.template_hash},
                                 {"model_fingerprint", capture.model_fingerprint},
                                 {"bytes", capture.bytes},
                                 {"entries", capture.entries},
                                 {"quarantined", capture.quarantined},
                                 {"created", capture.created},
                                 {"last_access", capture.last_access}});
               respond_json(response, 200, {{"object", "list"}, {"data", list}});
             }));
  server.Delete("/v1/templates/([0-9a-f]{4,64})",
                guarded([&context](const Request& request, Response& response) {
                  const int removed = store_of(context).remove(request.matches[1], false);
                  respond_json(response, 200, {{"removed", removed}});
                }));
}

}  // namespace flashps::http
