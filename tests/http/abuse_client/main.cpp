// Load-and-abuse benchmark for `flashps serve` (scripts/bench-http-abuse.sh drives it; issue 50).
// A standalone program like tests/http/load_client/: cpp-httplib's client, raw sockets and
// nlohmann/json, not the FlashPS SDK, so it sees any server build only through its sockets.
//
// Against one running server it runs phases of --phase-seconds each (phase.cpp):
//   alone         the ordinary clients only
//   slowloris     beside connections sending one byte of a request head per second
//   disconnect    beside clients that send an edit and hang up mid-edit
//   huge_body     beside requests declaring a huge Content-Length and sending it
//   header_flood  beside connections sending endless small headers without the key
// In every phase --clients ordinary clients send edits one after another (--route openai: one
// blocking POST /v1/images/edits; native: submit, poll, fetch the result) and a prober GETs
// /healthz every 0.2 s. Per phase it reports the edits answered, throughput, P50/P95/max latency,
// errors by kind, /healthz latency and failures, the server's RSS (with --server-pid: sampled every
// 0.5 s, start/max/end; the series goes to --rss-series), and how the server's /metrics counters
// moved (edits done, cancelled, engine steps; "done, answer unread": edits done that no ordinary
// client received, i.e. work for clients that were gone). Timings are measured, never judged.
//
// Bounds, so the benchmark cannot take the machine down: each abuser is limited in bytes and rate
// (--flood-mb, --huge-body-mb, ...); a phase is aborted, and says so, when the server's RSS passes
// --rss-cap-mb (or the server exits); requests never outlive the phase plus --grace-seconds.
//
// `flashps_http_abuse table LABEL=R.json[,R.json] [LABEL=...]` prints the reports side by side.
//
// Exit status: 0 when every phase ran (aborted phases included: they are results), 1 when the
// server could not be reached or exited, 2 for bad arguments.
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "abuse.h"
#include "edit_requests.h"
#include "phase.h"
#include "report_table.h"
#include "rss_sampler.h"

using namespace abuse;

// `table LABEL=FILE[,FILE...] ...`
static int print_reports(int argc, char** argv) {
  LabeledReports labeled;
  for (int i = 2; i < argc; ++i) {
    const std::string argument = argv[i];
    const size_t equals = argument.find('=');
    if (equals == std::string::npos || equals == 0) usage("table wants LABEL=REPORT.json[,REPORT.json], not " + argument);
    std::vector<json> reports;
    std::istringstream files(argument.substr(equals + 1));
    for (std::string file; std::getline(files, file, ',');) {
      try {
        reports.push_back(json::parse(read_file(file)));
      } catch (const json::exception& error) {
        usage(file + " is not a report (" + error.what() + ")");
      }
    }
    labeled.emplace_back(argument.substr(0, equals), reports);
  }
  if (labeled.empty()) usage("table needs at least one LABEL=REPORT.json");
  print_table(labeled);
  return 0;
}

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);
  if (argc >= 2 && std::string(argv[1]) == "table") return print_reports(argc, argv);
  const Options options = parse_options(argc, argv);
  const Media media = load_media(options);

  auto probe = make_client(options, 10, 10);
  const httplib::Result health = probe->Get("/healthz");
  if (!health || health->status != 200) {
    std::fprintf(stderr, "flashps_http_abuse: GET /healthz on port %d did not answer 200\n", options.port);
    return 1;
  }

  RssSampler rss(options);
  json report = {{"label", options.label},
                 {"options",
                  {{"phase_seconds", options.phase_seconds}, {"clients", options.clients}, {"route", options.route},
                   {"steps", options.steps}, {"keyed", !options.api_key.empty()},
                   {"flood_connections", options.flood_connections}, {"flood_mb", options.flood_mb},
                   {"slowloris_connections", options.slowloris_connections},
                   {"disconnect_clients", options.disconnect_clients}, {"rss_cap_mb", options.rss_cap_mb}}},
                 {"phases", json::array()}};
  bool server_gone = false;
  for (const std::string& phase : options.phases) {
    if (rss.current_mb() > options.rss_cap_mb) {  // memory an earlier phase left: no fair start
      const std::string why = "skipped: the server's RSS (" + std::to_string(int(rss.current_mb())) +
                              " MB) was already above --rss-cap-mb";
      std::printf("phase %s: %s\n", phase.c_str(), why.c_str());
      report["phases"].push_back({{"phase", phase}, {"aborted", why}});
      continue;
    }
    report["phases"].push_back(run_phase(phase, options, media, rss));
    if (rss.server_gone()) {
      server_gone = true;
      std::fprintf(stderr, "flashps_http_abuse: the server exited during phase %s; later phases skipped\n", phase.c_str());
      break;
    }
  }
  if (!options.report_path.empty()) std::ofstream(options.report_path) << report.dump(2) << "\n";
  if (!options.rss_series_path.empty()) rss.write_series(options.rss_series_path);
  print_table({{options.label.empty() ? "this run" : options.label, {report}}});
  return server_gone ? 1 : 0;
}
