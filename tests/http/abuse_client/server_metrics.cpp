#include "server_metrics.h"

#include <sstream>

#include "edit_requests.h"
#include "../load_client/metrics_text.h"

namespace abuse {

std::optional<Metrics> read_metrics(const Options& options, double timeout) {
  auto client = make_client(options, timeout, timeout);
  const httplib::Result result = client->Get("/metrics");
  if (!result || result->status != 200) return std::nullopt;
  return parse_metrics_text(result->body);
}

static double value(const Metrics& metrics, const std::string& name) { return metric_value(metrics, name); }

json settle(const Options& options, std::optional<Metrics>* last) {
  const auto start = Clock::now();
  for (;;) {
    *last = read_metrics(options, 5);
    const bool idle = *last && value(**last, "flashps_queue_depth") == 0 && value(**last, "flashps_running_batch_size") == 0;
    if (idle || seconds_since(start) >= options.settle_seconds) return {{"settled", idle}, {"seconds", seconds_since(start)}};
    sleep_seconds(0.25);
  }
}

json metrics_delta(const std::optional<Metrics>& before, const std::optional<Metrics>& after) {
  if (!before || !after) return nullptr;  // /metrics did not answer: nothing to compare
  auto delta = [&](const std::string& name) { return value(*after, name) - value(*before, name); };
  json moved = {{"engine_steps", delta("flashps_engine_steps_total")}};
  for (const char* outcome : {"done", "cancelled", "failed", "deadline_exceeded", "rejected"})
    moved[std::string("edits_") + outcome] = delta(std::string("flashps_edits_total{outcome=\"") + outcome + "\"}");
  // Counters of clients that went away, under whatever name a server version gives them
  // (e.g. flashps_edits_cancelled_client_gone_total).
  json gone = json::object();
  for (const auto& [name, number] : *after)
    if (name.find("disconnect") != std::string::npos || name.find("client_gone") != std::string::npos)
      gone[name] = number - value(*before, name);
  moved["client_gone_counters"] = gone;
  return moved;
}

}  // namespace abuse
