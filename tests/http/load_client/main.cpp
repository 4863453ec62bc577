// Load-and-fault client for `flashps serve` (tests/http/http_load_faults.sh drives it). A standalone
// program: cpp-httplib's client and nlohmann/json only, not the FlashPS SDK, so it sees the server
// exactly as any HTTP client does.
//
// C client threads take request numbers from a shared counter. Each request is one of these kinds,
// picked at random from a generator seeded by (--seed, request number), so a run's mix is
// reproducible whatever the thread timing:
//
//   plain              POST /v1/edits, poll until finished: outcome done, result 200 PNG
//   cancel             POST /v1/edits, DELETE after 0-600 ms: outcome cancelled (result 409 code
//                      cancelled) or done (the cancel lost the race: result 200 PNG)
//   deadline           POST /v1/edits with 30 steps and deadline_seconds 0.001-0.15: outcome
//                      deadline_exceeded (result 504 code deadline_exceeded), or done
//   upload_disconnect  raw TCP: headers with the body's Content-Length, half the body, close (FIN or
//                      RST): no edit may be created (checked through /metrics with --check-metrics)
//   sse_disconnect     POST /v1/edits, GET .../events, hang up after the first event: the edit must
//                      still finish (poll it): outcome done, result 200 PNG
//   openai             POST /v1/images/edits multipart (response_format=b64_json): 200 with a PNG in
//                      data[0].b64_json; the edit named by X-Flashps-Edit-Ids reads done
//   openai_disconnect  the same with a 0.2 s read timeout: the client hangs up while the server
//                      works; the server cancels its edit (checked through /metrics)
//
// Every accepted edit is followed until it reaches a terminal outcome, and every observation of it
// (status polls, the DELETE answer, the SSE event, the final re-check) must agree: never two
// different outcomes, never finished and then unfinished, status consistent with the outcome,
// progress (step) never going back. 429 (queue full) and 503 too_many_connections are legal
// answers: the request is retried after a short sleep, up to a bound, and counted. Any other 5xx is
// a violation, except 503 draining with --allow-draining and the documented 504 of a result past
// its deadline. Every request number ends exactly once, in one final class.
//
// --check-metrics: /metrics is read before and after the run (the server must carry no other
// traffic meanwhile); after the run the client waits for the server to go idle and requires that
// flashps_edits_total's outcomes match what it saw (deadline_exceeded and failed exactly; done and
// cancelled up to the edits of openai_disconnect requests the client never saw answered, which the
// server cancels when it sees the client go (flashps_edits_cancelled_client_gone_total) or finishes
// first, accounting for the 429s it never saw either), that no 500/502 answers were given, and that the
// open-connections gauge goes back to the client's own /metrics connection.
//
// --allow-draining: a SIGTERM comes during the run: 503 draining (and 503 cancelled for a blocking
// OpenAI edit the drain cancelled) are legal, edits may end cancelled, and the server's exit ends
// the run (transport errors then end the requests as server_gone). --server-may-die: a SIGKILL comes:
// transport errors end the run the same way; expectations before the kill still hold.
//
// --report FILE: the counts as JSON; accepted_edits is the number of edits the run created on the
// server (those followed, plus those of hung-up OpenAI requests that /metrics shows were accepted).
//
// Exit status: 0 when every expectation held, 1 naming each violation, 2 for bad arguments.
//
//
// Built on its own (tests/CMakeLists.txt keeps tests/http/load_client/ out of the Catch2 suite).
#include "load_metrics.h"
#include "load_request.h"
#include "load_media.h"
#include "load_run.h"

using namespace load_client;

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);
  Run run;
  run.args = parse_args(argc, argv);
  const Args& args = run.args;
  run.image = read_file(args.image);
  run.mask = read_file(args.mask);
  if (!is_png(run.image) && !is_jpeg(run.image)) usage(args.image + " is neither PNG nor JPEG");
  run.image_type = is_png(run.image) ? "png" : "jpeg";
  const auto size = image_size(run.image);
  if (!size) usage("cannot read the size of " + args.image);
  run.alpha_mask = args.alpha_mask.empty() ? alpha_mask_png(size->first, size->second) : read_file(args.alpha_mask);

  run.records.resize(size_t(args.requests));
  for (int number = 0; number < args.requests; ++number) {
    std::mt19937_64 pick(args.seed * 7919u + uint64_t(number));
    std::discrete_distribution<int> kind(std::begin(kKindWeights), std::end(kKindWeights));
    run.records[size_t(number)].kind = Kind(kind(pick));
  }

  std::map<std::string, double> before;
  if (args.check_metrics) {
    bool ok = false;
    before = read_metrics(run, &ok);
    if (!ok) {
      std::cerr << "http_load_client: cannot read /metrics on port " << args.port << "\n";
      return 1;
    }
  }

  std::printf("load: %d requests, %d clients, seed %llu, port %d, image %dx%d\n", args.requests, args.clients,
              static_cast<unsigned long long>(args.seed), args.port, size->first, size->second);
  std::fflush(stdout);
  run.start = Clock::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < args.clients; ++i) threads.emplace_back([&run] { client_thread(run); });
  for (std::thread& thread : threads) thread.join();
  const double elapsed = seconds_since(run.start);

  // Every request ended exactly once; every tracked edit reached one outcome.
  for (int number = 0; number < args.requests; ++number) {
    const Record& record = run.records[size_t(number)];
    if (record.ends != 1) run.violate(number, "ended " + std::to_string(record.ends) + " times");
  }
  int unresolved = 0;
  for (const auto& [id, edit] : run.edits)
    if (!edit.finished) ++unresolved;
  if (unresolved && !run.server_gone)
    run.violate_run(std::to_string(unresolved) + " accepted edit(s) never observed finished");

  // A final look at every tracked edit: the same outcome, or forgotten (404: the server keeps the
  // 256 most recent finished edits).
  if (!run.server_gone) {
    auto client = make_client(run, 30);
    int forgotten = 0, rechecked = 0;
    for (const auto& [id, edit] : run.edits) {
      if (!edit.finished) continue;
      httplib::Result result = client->Get("/v1/edits/" + id);
      if (!result) {
        if (args.allow_draining || args.server_may_die) {  // the server exited meanwhile: allowed
          run.server_gone = true;
          break;
        }
        run.violate_run("final re-check of " + id + ": transport error " + httplib::to_string(result.error()));
        break;
      }
      if (result->status == 404 && error_code(result->body) == "edit_not_found") {
        ++forgotten;
        continue;
      }
      if (result->status != 200) {
        run.violate_run("final re-check of " + id + ": HTTP " + std::to_string(result->status));
        continue;
      }
      ++rechecked;
      try {
        const json view = json::parse(result->body);
        if (!view.value("finished", false) || view.value("outcome", "") != edit.outcome)
          run.violate_run("final re-check of " + id + ": outcome was " + edit.outcome + ", now " + view.dump().substr(0, 300));
      } catch (const std::exception&) {
        run.violate_run("final re-check of " + id + ": not JSON");
      }
    }
    std::printf("final re-check: %d edits still known and unchanged, %d forgotten (404)%s\n", rechecked, forgotten,
                run.server_gone ? ", then the server was gone" : "");
    httplib::Result health = client->Get("/healthz");
    if (!run.server_gone && !args.allow_draining && (!health || health->status != 200))
      run.violate_run("GET /healthz after the run: not 200");
    if (!run.server_gone && !args.allow_draining) {
      httplib::Result ready = client->Get("/readyz");
      if (!ready || ready->status != 200) run.violate_run("GET /readyz after the run: not 200");
    }
  }

  // Client-side tallies.
  std::map<std::string, int64_t> classes;
  std::map<std::string, std::map<std::string, int64_t>> by_kind;
  std::map<std::string, std::vector<double>> latencies;
  int64_t tracked_done = 0, tracked_cancelled = 0, tracked_deadline = 0, tracked_failed = 0;
  for (const Record& record : run.records) {
    const std::string kind = kKindNames[int(record.kind)];
    ++classes[record.final_class];
    ++by_kind[kind][record.final_class];
    latencies[kind].push_back(record.latency);
    latencies["all"].push_back(record.latency);
  }
  for (const auto& [id, edit] : run.edits) {
    if (!edit.finished) continue;
    if (edit.outcome == "done") ++tracked_done;
    else if (edit.outcome == "cancelled") ++tracked_cancelled;
    else if (edit.outcome == "deadline_exceeded") ++tracked_deadline;
    else ++tracked_failed;
  }

  // /metrics against the client's counts, once the server is idle.
  json metrics_report;
  if (args.check_metrics && !run.server_gone) {
    const auto settle_start = Clock::now();
    std::map<std::string, double> after;
    std::string mismatch;
    for (;;) {
      bool ok = false;
      after = read_metrics(run, &ok);
      if (!ok) {
        mismatch = "cannot read /metrics";
      } else {
        auto delta = [&](const std::string& name) { return int64_t(std::llround(metric(after, name) - metric(before, name))); };
        const int64_t done = delta(outcome_metric("done")), cancelled = delta(outcome_metric("cancelled"));
        const int64_t deadline = delta(outcome_metric("deadline_exceeded")), failed = delta(outcome_metric("failed"));
        const int64_t rejected = delta(outcome_metric("rejected"));
        const int64_t unseen_rejected = rejected - run.seen_429;
        // The edits of openai_disconnect requests: cancelled when the server saw the client go
        // (flashps_edits_cancelled_client_gone_total), done when they finished first.
        const int64_t untracked_done = done - tracked_done, untracked_cancelled = cancelled - tracked_cancelled;
        const int64_t gone = delta("flashps_edits_cancelled_client_gone_total");
        std::ostringstream why;
        if (untracked_cancelled < 0) why << "cancelled " << cancelled << " < client's " << tracked_cancelled << "; ";
        if (gone < untracked_cancelled || gone > run.openai_timed_out)
          why << "cancelled for gone clients " << gone << ", but " << untracked_cancelled << " untracked cancels and "
              << run.openai_timed_out << " OpenAI requests hung up; ";
        if (deadline != tracked_deadline) why << "deadline_exceeded " << deadline << " != client's " << tracked_deadline << "; ";
        if (failed != tracked_failed) why << "failed " << failed << " != client's " << tracked_failed << "; ";
        if (unseen_rejected < 0 || unseen_rejected > run.openai_timed_out)
          why << "rejected " << rejected << " vs 429s seen " << run.seen_429 << "; ";
        if (untracked_done + untracked_cancelled + unseen_rejected != run.openai_timed_out)
          why << "done " << done << " = client's " << tracked_done << " + " << untracked_done << " untracked, cancelled "
              << cancelled << " = client's " << tracked_cancelled << " + " << untracked_cancelled << " untracked, but "
              << run.openai_timed_out << " OpenAI requests hung up and " << unseen_rejected
              << " of them were refused unseen (an edit created by a half upload, or lost?); ";
        if (metric(after, "flashps_queue_depth") != 0 || metric(after, "flashps_running_batch_size") != 0)
          why << "queue_depth " << metric(after, "flashps_queue_depth") << ", running " << metric(after, "flashps_running_batch_size") << "; ";
        if (metric(after, "flashps_http_connections") > 1)
          why << "open connections " << metric(after, "flashps_http_connections") << " (only this /metrics request should be open); ";
        for (const int code : {500, 502})
          if (delta("flashps_http_requests_total{code=\"" + std::to_string(code) + "\"}") != 0)
            why << delta("flashps_http_requests_total{code=\"" + std::to_string(code) + "\"}") << " answers with status " << code << "; ";
        mismatch = why.str();
        metrics_report = {{"done", done},         {"cancelled", cancelled},   {"deadline_exceeded", deadline},
                          {"failed", failed},     {"rejected", rejected},     {"unseen_rejected", unseen_rejected},
                          {"untracked_done", untracked_done}, {"untracked_cancelled", untracked_cancelled},
                          {"cancelled_client_gone", gone},
                          {"edits_total", done + cancelled + deadline + failed},
                          {"http_connections", metric(after, "flashps_http_connections")}};
      }
      if (mismatch.empty() || seconds_since(settle_start) > 60) break;
      sleep_seconds(0.5);
    }
    if (!mismatch.empty()) run.violate_run("/metrics disagree with the client after 60 s of idling: " + mismatch);
    std::printf("metrics: %s (settled in %.1f s)\n", metrics_report.dump().c_str(), seconds_since(settle_start));
  }

  // Summary.
  std::printf("\n%-18s %6s  %-62s %8s %8s\n", "kind", "count", "final classes", "p50 s", "p95 s");
  for (const auto& [kind, counts] : by_kind) {
    std::string text;
    int64_t total = 0;
    for (const auto& [name, count] : counts) {
      text += (text.empty() ? "" : " ") + name + "=" + std::to_string(count);
      total += count;
    }
    std::printf("%-18s %6lld  %-62s %8.2f %8.2f\n", kind.c_str(), static_cast<long long>(total), text.c_str(),
                percentile(latencies[kind], 0.5), percentile(latencies[kind], 0.95));
  }
  std::printf("%-18s %6d  %-62s %8.2f %8.2f\n", "all", args.requests, "", percentile(latencies["all"], 0.5),
              percentile(latencies["all"], 0.95));
  std::string status_text;
  for (const auto& [status, count] : run.statuses) status_text += " " + std::to_string(status) + "=" + std::to_string(count);
  std::printf("edits followed: %zu (done %lld, cancelled %lld, deadline_exceeded %lld, failed %lld)\n", run.edits.size(),
              static_cast<long long>(tracked_done), static_cast<long long>(tracked_cancelled),
              static_cast<long long>(tracked_deadline), static_cast<long long>(tracked_failed));
  std::printf("HTTP statuses seen:%s; 429 retries %lld, 503 too_many_connections retries %lld, transport errors %lld\n",
              status_text.c_str(), static_cast<long long>(run.seen_429), static_cast<long long>(run.seen_503_connections),
              static_cast<long long>(run.transport_errors));
  std::printf("elapsed %.1f s, %.2f requests/s%s\n", elapsed, elapsed > 0 ? args.requests / elapsed : 0.0,
              run.server_gone ? " (the server went away during the run)" : "");

  if (!args.report.empty()) {
    json report = {{"requests", args.requests},
                   {"clients", args.clients},
                   {"seed", args.seed},
                   {"elapsed_seconds", elapsed},
                   {"classes", classes},
                   {"refused_draining", classes["refused_draining"]},
                   {"by_kind", by_kind},
                   {"edits_followed", run.edits.size()},
                   {"accepted_edits", int64_t(run.edits.size()) + run.openai_timed_out -
                                          (metrics_report.is_object() ? metrics_report.value("unseen_rejected", int64_t{0}) : 0)},
                   {"outcomes", {{"done", tracked_done}, {"cancelled", tracked_cancelled}, {"deadline_exceeded", tracked_deadline}, {"failed", tracked_failed}}},
                   {"openai_hung_up", run.openai_timed_out},
                   {"seen_429", run.seen_429},
                   {"seen_503_too_many_connections", run.seen_503_connections},
                   {"transport_errors", run.transport_errors},
                   {"server_gone", run.server_gone.load()},
                   {"latency_p50", percentile(latencies["all"], 0.5)},
                   {"latency_p95", percentile(latencies["all"], 0.95)},
                   {"metrics", metrics_report},
                   {"violations", run.violations}};
    std::ofstream(args.report) << report.dump(2) << "\n";
  }

  if (!run.violations.empty()) {
    std::printf("\nFAIL: %zu violated expectation(s):\n", run.violations.size());
    for (size_t i = 0; i < run.violations.size() && i < 100; ++i) std::printf("  %s\n", run.violations[i].c_str());
    return 1;
  }
  std::printf("PASS: every request ended exactly once with the expected statuses\n");
  return 0;
}
