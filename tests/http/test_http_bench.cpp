// `bench http` end to end on a tiny random model: every client this build has answers, and the
// report's figures are consistent with each other (the timings themselves are not asserted).
#include <catch2/catch.hpp>

#include "bench/http_bench_client.h"
#include "bench/http_benchmark.h"
#include "support/temp_dir.h"
#include "support/tiny_pipeline.h"

namespace flashps {

TEST_CASE("bench http: in-process and HTTP sides over each client, overhead split into its parts",
          "[http][bench][slow]") {
  test::TempDir dir;
  bench::HttpBenchmarkOptions options;
  options.model = test::tiny_model(dir);
  options.requests = 4;
  options.clients = 2;
  options.rounds = 2;
  int progress_events = 0;
  options.progress = [&](const ProgressEvent&) {
    ++progress_events;
    return true;
  };
  const bench::HttpBenchmarkReport report = bench::run_http_benchmark(options);
  const auto& sides = report.results["sides"];
  const size_t expected_sides = 1 + bench::client_available(bench::HttpClientKind::libcurl) + 1;
  REQUIRE(sides.size() == expected_sides);
  CHECK(sides[0]["path"] == "in-process");
  CHECK_FALSE(sides[0].contains("overhead"));
  CHECK(progress_events == options.rounds * static_cast<int>(expected_sides));
  for (const auto& side : sides) {
    INFO(side.dump());
    CHECK(side["requests_per_second"].get<double>() > 0);
    const auto& latency = side["latency"];
    CHECK(latency["p50_ms"].get<double>() > 0);
    CHECK(latency["p50_ms"].get<double>() <= latency["p95_ms"].get<double>());
    CHECK(latency["p95_ms"].get<double>() <= latency["p99_ms"].get<double>());
    if (side["path"] == "in-process") continue;
    // The server's phases are parts of the client's latency, so the overhead is below it.
    CHECK(side["overhead"]["p50_ms"].get<double>() < latency["p50_ms"].get<double>());
    for (const char* part : {"overhead_of_which_wait", "overhead_of_which_headers", "overhead_of_which_receive",
                             "overhead_of_which_finish", "overhead_of_which_answer"})
      CHECK(side[part]["p50_ms"].get<double>() >= 0);
    // The slowest requests' parts add up to their overhead: no part counted twice or left out.
    const auto& tail = side["slowest_5_percent_mean_ms"];
    CHECK(tail["requests"].get<int>() >= 1);
    double parts = 0;
    for (const char* part : {"wait", "headers", "receive", "finish", "answer", "rest"}) parts += tail[part].get<double>();
    CHECK(parts == Approx(tail["overhead"].get<double>()).margin(1e-6));
    // Only libcurl's client has its own clock: connecting and reading the answer, parts of the rest.
    const bool libcurl = side["path"] == "HTTP libcurl";
    CHECK(side.contains("transfer_of_which_connect") == libcurl);
    CHECK(tail.contains("rest_download") == libcurl);
    if (libcurl) {
      CHECK(side["transfer_of_which_connect"]["p50_ms"].get<double>() >= 0);
      CHECK(side["transfer_of_which_download"]["p50_ms"].get<double>() >= 0);
      CHECK(side["transfer_of_which_download"]["p50_ms"].get<double>() < latency["p50_ms"].get<double>());
    }
  }
  const std::string table = report.table();
  CHECK(table.find("HTTP httplib overhead per request") != std::string::npos);
  CHECK(table.find("in-process") != std::string::npos);
}

TEST_CASE("bench http clients: a refused connection is an error naming the request", "[http][bench]") {
  for (const auto kind : {bench::HttpClientKind::httplib, bench::HttpClientKind::libcurl}) {
    if (!bench::client_available(kind)) continue;
    INFO(bench::client_name(kind));
    // Port 1 on loopback: nothing listens there for an unprivileged test.
    CHECK_THROWS_WITH(bench::post_form(kind, 1, "/v1/images/edits", {{"prompt", "x", "", ""}}),
                      Catch::Contains("bench http: request failed"));
  }
}

}  // namespace flashps
