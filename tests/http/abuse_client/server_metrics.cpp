#include "server_metrics.h"

#include <sstream>

#include "edit_requests.h"

namespace abuse {

std::optional<Metrics> read_metrics(const Options& options, double timeout) {
  auto client = make_client(options, timeout, timeout);
  const httplib::Result result = client->Get("/metrics");
  if (!result || result->status != 200) return std::nullopt;
  Metrics values;
  std::istringstream lines(result->body);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    try {
      values[line.substr(0, space)] = std::stod(line.substr(space + 1));
    } catch (const std::exception&) {
    }
  }
  return values;
}

static double value(const Metrics& metrics, const std::string& name) {
  const auto found = metrics.find(name);
  return found == metrics.end() ? 0 : found->second;
}

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
