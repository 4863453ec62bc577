#include "report_table.h"

#include <cmath>
#include <cstdio>
#include <set>

namespace abuse {

namespace {

enum class Merge { mean, max, counts };  // counts: {kind: n} maps, summed and shown as text

struct Row {
  const char* title;
  const char* pointer;  // into a phase's JSON
  Merge merge;
  double scale = 1;
  const char* only_phase = nullptr;  // rows about one abuser
};

const Row kRows[] = {
    {"ordinary edits answered", "/ordinary/ok", Merge::mean},
    {"throughput (edits/s)", "/ordinary/throughput", Merge::mean},
    {"latency p50 (s)", "/ordinary/latency/p50", Merge::mean},
    {"latency p95 (s)", "/ordinary/latency/p95", Merge::mean},
    {"latency max (s)", "/ordinary/latency/max", Merge::max},
    {"p95 with unanswered (s)", "/ordinary/latency_with_unanswered/p95", Merge::mean},
    {"ordinary errors", "/ordinary/errors", Merge::counts},
    {"/healthz p95 (ms)", "/health/latency/p95", Merge::mean, 1000},
    {"/healthz max (ms)", "/health/latency/max", Merge::max, 1000},
    {"/healthz failures", "/health/failures", Merge::counts},
    {"RSS start (MB)", "/rss/start_mb", Merge::mean},
    {"RSS max (MB)", "/rss/max_mb", Merge::mean},  // a mean like start and end, so the three compare
    {"RSS end (MB)", "/rss/end_mb", Merge::mean},
    {"server: edits done", "/server/edits_done", Merge::mean},
    {"server: edits cancelled", "/server/edits_cancelled", Merge::mean},
    {"server: done, answer unread", "/server/edits_done_unanswered", Merge::mean},
    {"server: engine steps", "/server/engine_steps", Merge::mean},
    {"server: client-gone counters", "/server/client_gone_counters", Merge::counts},
    {"flood connections", "/abuse/connections", Merge::mean, 1, "header_flood"},
    {"flood MB/connection p50", "/abuse/mb_per_connection/p50", Merge::mean, 1, "header_flood"},
    {"flood MB/connection max", "/abuse/mb_per_connection/max", Merge::max, 1, "header_flood"},
    {"flood endings", "/abuse/endings", Merge::counts, 1, "header_flood"},
    {"slow connections open (mean)", "/abuse/mean_open", Merge::mean, 1, "slowloris"},
    {"slow lifetime p50 (s)", "/abuse/ended_lifetime_s/p50", Merge::mean, 1, "slowloris"},
    {"slow endings", "/abuse/endings", Merge::counts, 1, "slowloris"},
    {"disconnecter outcomes", "/abuse/outcomes", Merge::counts, 1, "disconnect"},
    {"body MB/connection max", "/abuse/mb_per_connection/max", Merge::max, 1, "huge_body"},
    {"body endings", "/abuse/endings", Merge::counts, 1, "huge_body"},
};

const json* find_phase(const json& report, const std::string& name) {
  if (!report.contains("phases") || !report["phases"].is_array()) return nullptr;
  for (const json& phase : report["phases"])
    if (phase.value("phase", "") == name) return &phase;
  return nullptr;
}

// The merged number of one row over a label's reports; NAN when no report has it.
double merged_number(const Row& row, const std::vector<json>& reports, const std::string& phase_name) {
  double sum = 0, max = -INFINITY;
  int count = 0;
  for (const json& report : reports) {
    const json* phase = find_phase(report, phase_name);
    if (!phase || !phase->contains(json::json_pointer(row.pointer))) continue;
    const json& value = phase->at(json::json_pointer(row.pointer));
    if (!value.is_number()) continue;
    sum += value.get<double>() * row.scale;
    max = std::max(max, value.get<double>() * row.scale);
    ++count;
  }
  if (count == 0) return NAN;
  return row.merge == Merge::max ? max : sum / count;
}

std::string merged_counts(const Row& row, const std::vector<json>& reports, const std::string& phase_name) {
  std::map<std::string, double> sums;
  bool any = false;
  for (const json& report : reports) {
    const json* phase = find_phase(report, phase_name);
    if (!phase || !phase->contains(json::json_pointer(row.pointer))) continue;
    any = true;
    for (const auto& [kind, count] : phase->at(json::json_pointer(row.pointer)).items())
      if (count.is_number()) sums[kind] += count.get<double>();
  }
  if (!any) return "";
  std::string text;
  for (const auto& [kind, count] : sums) text += (text.empty() ? "" : " ") + kind + "=" + std::to_string(int64_t(count));
  return text.empty() ? "none" : text;
}

std::string number_text(double value) {
  if (std::isnan(value)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, std::fabs(value) >= 100 ? "%.0f" : "%.2f", value);
  return text;
}

}  // namespace

void print_table(const LabeledReports& labeled) {
  std::vector<std::string> phases;  // in the order of the first report that names them
  std::set<std::string> seen;
  for (const auto& [label, reports] : labeled)
    for (const json& report : reports)
      for (const json& phase : report.value("phases", json::array()))
        if (seen.insert(phase.value("phase", "")).second) phases.push_back(phase.value("phase", ""));
  const bool ratio = labeled.size() == 2;
  for (const std::string& phase : phases) {
    std::printf("\n== %s\n%-32s", phase.c_str(), "");
    for (const auto& entry : labeled) std::printf(" %14.14s", entry.first.c_str());
    if (ratio) std::printf(" %8s", "B/A");
    std::printf("\n");
    for (const Row& row : kRows) {
      if (row.only_phase && phase != row.only_phase) continue;
      if (row.merge == Merge::counts) {
        std::printf("%-32s\n", row.title);
        for (const auto& [label, reports] : labeled)
          std::printf("    %-14s %s\n", (label + ":").c_str(), merged_counts(row, reports, phase).c_str());
        continue;
      }
      std::printf("%-32s", row.title);
      std::vector<double> values;
      for (const auto& entry : labeled) {
        values.push_back(merged_number(row, entry.second, phase));
        std::printf(" %14s", number_text(values.back()).c_str());
      }
      if (ratio) std::printf(" %8s", values[0] != 0 ? number_text(values[1] / values[0]).c_str() : "-");
      std::printf("\n");
    }
    for (const auto& [label, reports] : labeled)
      for (const json& report : reports) {
        const json* found = find_phase(report, phase);
        if (found && found->value("aborted", json(nullptr)).is_string())
          std::printf("    %s: ABORTED: %s\n", label.c_str(), found->at("aborted").get<std::string>().c_str());
      }
  }
  std::fflush(stdout);
}

}  // namespace abuse
