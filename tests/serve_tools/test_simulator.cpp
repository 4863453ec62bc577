#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <cmath>

#include "core/diagnostics/error.h"
#include "serve_tools/latency_summary.h"
#include "serve_tools/simulator.h"
#include "support/temp_dir.h"

using namespace flashps::serve;

namespace {

DeviceProfile simple_profile(double pre = 0, double post = 0) {
  DeviceProfile profile = h800_flux_profile();
  profile.preprocess_seconds = pre;
  profile.postprocess_seconds = post;
  return profile;
}

TraceRequest arriving(double arrival, int steps, double ratio = 0.2) {
  const DeviceProfile profile = h800_flux_profile();
  TraceRequest request;
  request.arrival = arrival;
  request.mask_ratio = ratio;
  request.work.steps = steps;
  request.work.image_tokens = profile.image_tokens;
  request.work.text_tokens = profile.text_tokens;
  request.work.masked_tokens = static_cast<int64_t>(ratio * profile.image_tokens);
  request.work.cached = true;
  return request;
}

}  // namespace

TEST_CASE("a request arriving mid-batch joins at the next step with continuous batching, not with static", "[serve][simulator]") {
  SimulationOptions options;
  options.devices = 1;
  options.profile = simple_profile();
  const double step = estimate_step(options.profile, {arriving(0, 1).work}).seconds;
  const std::vector<TraceRequest> trace{arriving(0, 10), arriving(2.5 * step, 2)};

  options.batching = batching_config("cb", 4);
  SimulationResult continuous = simulate(options, trace);
  CHECK(continuous.outcomes[1].first_step == Approx(3 * step));  // the next step boundary after 2.5 steps
  CHECK(continuous.completion_order == std::vector<size_t>{1, 0});

  options.batching = batching_config("static", 4);
  SimulationResult batch = simulate(options, trace);
  CHECK(batch.outcomes[1].first_step == Approx(batch.outcomes[0].finish));  // waits for the batch
  CHECK(batch.completion_order == std::vector<size_t>{0, 1});
}

TEST_CASE("a small request batched with a large one steps at the large one's pace", "[serve][simulator]") {
  // Continuous batching steps every running request together, so a small edit sharing a worker
  // with a large one takes nearly the large one's time (why serving's P95 holds small requests).
  SimulationOptions options;
  options.devices = 1;
  options.profile = simple_profile();
  options.batching = batching_config("cb", 8);
  const double small_alone = simulate(options, {arriving(0, 28, 0.02)}).outcomes[0].latency();
  const double large_alone = simulate(options, {arriving(0, 28, 1.0)}).outcomes[0].latency();
  REQUIRE(large_alone > 3 * small_alone);
  const SimulationResult shared = simulate(options, {arriving(0, 28, 1.0), arriving(0, 28, 0.02)});
  CHECK(shared.outcomes[1].latency() > large_alone);  // it also slows the large one a little
  // Within one small step: the small request's first step can follow the large one's.
  CHECK(shared.outcomes[1].latency() == Approx(shared.outcomes[0].latency()).margin(small_alone / 28 * 1.5));
}

TEST_CASE("inline pre-processing interrupts the running batch; disaggregated does not", "[serve][simulator]") {
  SimulationOptions options;
  options.devices = 1;
  options.profile = simple_profile(/*pre=*/0.5, /*post=*/0.0);
  const std::vector<TraceRequest> trace{arriving(0, 20), arriving(0.6, 2), arriving(0.7, 2), arriving(0.8, 2)};
  options.batching = batching_config("naive-cb", 8);
  const double naive = simulate(options, trace).outcomes[0].latency();
  options.batching = batching_config("cb", 8);
  const double disaggregated = simulate(options, trace).outcomes[0].latency();
  CHECK(naive - disaggregated > 3 * 0.5 - 1e-6);  // three interruptions of 0.5 s each
}

TEST_CASE("simulations are deterministic and finish every request", "[serve][simulator]") {
  WorkloadOptions workload;
  workload.requests = 300;
  workload.requests_per_second = 3;
  const std::vector<TraceRequest> trace = make_workload(workload, MaskRatioSource::parametric("public"));
  for (const char* batching : {"static-full", "static", "naive-cb", "cb"}) {
    SimulationOptions options;
    options.batching = batching_config(batching, 8);
    options.profile = h800_flux_profile();
    const SimulationResult first = simulate(options, trace), second = simulate(options, trace);
    CHECK(first.completion_order == second.completion_order);
    CHECK(first.completion_order.size() == trace.size());
    for (const RequestOutcome& outcome : first.outcomes) {
      CHECK(outcome.finish >= outcome.first_step);
      CHECK(outcome.first_step >= outcome.arrival);
    }
  }
}

TEST_CASE("workloads follow their rate and the fitted trace distributions", "[serve][workload]") {
  WorkloadOptions options;
  options.requests = 20000;
  options.requests_per_second = 4;
  const auto poisson = make_workload(options, MaskRatioSource::parametric("production"));
  CHECK(poisson.back().arrival / options.requests == Approx(0.25).epsilon(0.03));
  double mean_ratio = 0;
  for (const TraceRequest& request : poisson) mean_ratio += request.mask_ratio / options.requests;
  CHECK(mean_ratio == Approx(0.112).margin(0.005));
  options.arrivals = "gamma";
  options.cv = 3;
  const auto bursty = make_workload(options, MaskRatioSource::parametric("public"));
  std::vector<double> gaps;
  for (size_t i = 1; i < bursty.size(); ++i) gaps.push_back(bursty[i].arrival - bursty[i - 1].arrival);
  double mean = 0, variance = 0;
  for (double gap : gaps) mean += gap / gaps.size();
  for (double gap : gaps) variance += (gap - mean) * (gap - mean) / gaps.size();
  CHECK(std::sqrt(variance) / mean == Approx(3).epsilon(0.15));
  CHECK(MaskRatioSource::named("production", "/nonexistent").description().find("Beta fit") != std::string::npos);
  CHECK_THROWS_WITH(MaskRatioSource::named("nope", ""), Catch::Contains("production, public"));
  options.arrivals = "uniform";
  CHECK_THROWS_AS(make_workload(options, MaskRatioSource::parametric("public")), flashps::Error);
}

TEST_CASE("device profiles round-trip through JSON; bad files are named", "[serve][profile]") {
  flashps::test::TempDir dir;
  DeviceProfile profile = h800_flux_profile();
  profile.block_compute.r2 = 0.97;
  write_device_profile(profile, dir.file("p.json"));
  const DeviceProfile read = read_device_profile(dir.file("p.json"));
  CHECK(read.blocks.size() == profile.blocks.size());
  CHECK(read.block_compute.slope == profile.block_compute.slope);
  CHECK(read.block_compute.r2 == 0.97);
  const std::vector<RequestWork> batch{arriving(0, 1, 0.3).work, arriving(0, 1, 0.05).work};
  CHECK(estimate_step(read, batch).seconds == estimate_step(profile, batch).seconds);
  std::FILE* file = std::fopen(dir.file("bad.json").c_str(), "w");
  std::fputs("{\"format\": \"flashps-device-profile\", \"version\": 1}", file);
  std::fclose(file);
  CHECK_THROWS_WITH(read_device_profile(dir.file("bad.json")), Catch::Contains("bad.json"));

  // The cache mode is stored as "cache_mode"; profiles written before the one name used
  // "cache_kind" and still load. A mode a replay cannot run as is refused, naming the file.
  std::string text;
  {
    std::ifstream in(dir.file("p.json"));
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t key = text.find("\"cache_mode\"");
  REQUIRE(key != std::string::npos);
  std::string legacy = text;
  legacy.replace(key, 12, "\"cache_kind\"");
  std::ofstream(dir.file("legacy.json")) << legacy;
  CHECK(read_device_profile(dir.file("legacy.json")).cache_mode == profile.cache_mode);
  std::string full = text;
  const size_t value = full.find('"', full.find(':', key) + 1);
  full.replace(value, full.find('"', value + 1) - value + 1, "\"full\"");
  std::ofstream(dir.file("full.json")) << full;
  CHECK_THROWS_WITH(read_device_profile(dir.file("full.json")),
                    Catch::Contains("full.json") && Catch::Contains("kv or hidden"));
}

TEST_CASE("latency percentiles interpolate like numpy", "[serve]") {
  CHECK(percentile({1, 2, 3, 4}, 0.5) == Approx(2.5));
  CHECK(percentile({1, 2, 3, 4, 5}, 0.95) == Approx(4.8));
  const LatencySummary summary = summarize_latencies({1, 2, 3, 10}, {0, 0, 1, 5}, 10, 3);
  CHECK(summary.mean == Approx(4));
  CHECK(summary.slo_attainment == Approx(0.75));
  CHECK(summary.goodput == Approx(0.3));
}

TEST_CASE("the latency tail's share from the largest requests", "[serve]") {
  std::vector<double> works, latencies;
  for (int i = 1; i <= 40; ++i) works.push_back(i);
  // The slowest 5% (latency >= P95: the two slowest) are the two largest, within the largest tenth.
  CHECK(tail_share_from_largest(works, works) == Approx(1.0));
  // Small requests slowest: none of the tail is large.
  for (double work : works) latencies.push_back(100 - work);
  CHECK(tail_share_from_largest(latencies, works) == Approx(0.0));
  // One large and one small request in the tail.
  latencies.assign(40, 1.0);
  latencies[39] = 50;  // the largest
  latencies[0] = 60;   // the smallest
  CHECK(tail_share_from_largest(latencies, works) == Approx(0.5));
  // Middle-sized requests in the tail: not the largest tenth.
  latencies.assign(40, 1.0);
  latencies[19] = 70;
  latencies[20] = 80;
  CHECK(tail_share_from_largest(latencies, works) == Approx(0.0));
  CHECK_THROWS_WITH(tail_share_from_largest({1, 2}, {1}), Catch::Contains("2 latencies for 1 requests"));
}
