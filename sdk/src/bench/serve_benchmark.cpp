#include "bench/serve_benchmark.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <chrono>
#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>
#include <thread>

#include "core/diagnostics/error.h"
#include "core/image/image.h"
#include "pipeline/family_registry.h"
#include "serve/batch_size.h"
#include "serve/device_selection.h"
#include "serve/engine.h"
#include "serve/engine_device.h"
#include "serve_tools/latency_summary.h"
#include "serve_tools/simulator.h"
#include "serve_tools/workload.h"
#include "workload/random_masks.h"

namespace flashps::bench {
namespace {

using namespace flashps::serve;

struct Configuration {
  std::string batching;
  BalancePolicy policy;
};

// Every batching compared under the mask-aware policy, and every policy under cb; the
// diffusers-style baseline balances by request count (its best-known simple policy).
std::vector<Configuration> simulated_configurations() {
  return {{"static-full", BalancePolicy::request_count}, {"static", BalancePolicy::mask_aware},
          {"naive-cb", BalancePolicy::mask_aware},       {"cb", BalancePolicy::round_robin},
          {"cb", BalancePolicy::request_count},          {"cb", BalancePolicy::token_count},
          {"cb", BalancePolicy::mask_aware},             {"cb", BalancePolicy::finish_time}};
}

ServeRow row_of(const Configuration& configuration, double rps, const std::vector<double>& latencies,
                const std::vector<double>& queueings, double duration, double slo) {
  const LatencySummary summary = summarize_latencies(latencies, queueings, duration, slo);
  ServeRow row;
  row.batching = configuration.batching;
  row.policy = balance_policy_name(configuration.policy);
  row.rps = rps;
  row.mean = summary.mean;
  row.p50 = summary.p50;
  row.p95 = summary.p95;
  row.p99 = summary.p99;
  row.mean_queueing = summary.mean_queueing;
  row.p95_queueing = summary.p95_queueing;
  row.throughput = summary.throughput;
  row.goodput = summary.goodput;
  row.slo_attainment = summary.slo_attainment;
  row.completed = summary.completed;
  return row;
}

ServeRow simulated_row(const Configuration& configuration, double rps, const SimulationResult& result,
                       const std::vector<TraceRequest>& trace, double duration, double slo) {
  std::vector<double> latencies, queueings, works;
  for (const RequestOutcome& outcome : result.outcomes) {
    latencies.push_back(outcome.latency());
    queueings.push_back(outcome.queueing());
  }
  const bool replays = batching_config(configuration.batching, 1).mask_aware;
  for (const TraceRequest& request : trace) {  // the work each request ran, as the simulator steps it
    RequestWork work = request.exact_work ? *request.exact_work : request.work;
    if (!replays) work.cached = false;
    works.push_back(double(work.computed_tokens()) * double(work.steps));
  }
  ServeRow row = row_of(configuration, rps, latencies, queueings, duration, slo);
  row.tail_share_from_largest = tail_share_from_largest(latencies, works);
  return row;
}

const ServeRow* find_row(const std::vector<ServeRow>& rows, const std::string& truth, double rps,
                         const std::string& batching, const std::string& policy) {
  for (const ServeRow& row : rows)
    if (row.truth == truth && row.rps == rps && row.batching == batching && row.policy == policy) return &row;
  throw Error("bench serve: no row for " + truth + " " + batching + "/" + policy);
}

double round_rate(double rps) {  // two significant digits, for readable tables
  if (rps <= 0) return rps;
  const double scale = std::pow(10.0, std::floor(std::log10(rps)) - 1);
  return std::round(rps / scale) * scale;
}

SimulationResult simulate_configuration(const Configuration& configuration, const ServeBenchmarkOptions& options,
                                        const DeviceProfile& profile, const std::vector<TraceRequest>& trace,
                                        const GroundTruthOptions& truth = {}) {
  SimulationOptions simulation;
  simulation.ground_truth = truth;
  simulation.batching = batching_config(configuration.batching, options.max_batch);
  simulation.policy = configuration.policy;
  simulation.devices = options.simulate;
  simulation.profile = profile;
  return simulate(simulation, trace);
}

std::string label_of(const Configuration& configuration) {
  return configuration.batching + " " + balance_policy_name(configuration.policy);
}

// What --compare-simulated keeps of one real configuration's run.
struct RealRun {
  Configuration configuration;
  std::vector<StepRecord> steps;
  double prepare_seconds = 0, finish_seconds = 0;  // per request, means
};

// Tokens the real workers computed (every request's every step) over those the simulation of the
// same requests computes (their prepared work): 1 when the simulated trace prepares each request
// as the engine did.
double real_tokens_over_simulated(const RealRun& run, const std::vector<TraceRequest>& trace) {
  double real = 0, simulated = 0;
  for (const StepRecord& step : run.steps)
    for (const RequestWork& work : step.batch) real += double(work.computed_tokens());
  for (const TraceRequest& request : trace)
    simulated += double(request.exact_work->steps) * double(request.exact_work->computed_tokens());
  return simulated > 0 ? real / simulated : 0.0;
}

// Each real step's seconds over what the measured truth replays for the same batch (its recorded
// median, and with the co-run slowdown when other workers were mid-step): P10 / P50 / P90 per
// configuration, apart for steps taken alone and beside a stepping worker. The simulator's step
// model checked step by step, without queueing or routing in between.
nlohmann::json real_steps_over_replayed(const std::vector<RealRun>& runs, const DeviceProfile& profile) {
  if (profile.measured_steps.empty()) return "the profile has no measured steps";
  GroundTruthOptions measured;
  measured.kind = GroundTruthKind::measured;
  measured.shared_host = true;
  const StepGroundTruth truth(profile, measured);
  nlohmann::json result = nlohmann::json::object();
  const auto quantiles = [](std::vector<double> values) -> nlohmann::json {
    if (values.empty()) return nullptr;
    return {{"steps", values.size()},
            {"p10", serve::percentile(values, 0.10)},
            {"p50", serve::percentile(values, 0.50)},
            {"p90", serve::percentile(values, 0.90)}};
  };
  for (const RealRun& run : runs) {
    std::vector<double> alone, beside, beside_with_co_run;
    for (const StepRecord& step : run.steps) {
      const double replayed = truth.expected_seconds(step.batch, 0);
      if (step.others_stepping == 0) {
        alone.push_back(step.seconds / replayed);
      } else {
        beside.push_back(step.seconds / replayed);
        beside_with_co_run.push_back(step.seconds / truth.expected_seconds(step.batch, step.others_stepping));
      }
    }
    result[label_of(run.configuration)] = {
        {"alone", quantiles(alone)},
        {"beside_a_stepping_worker", quantiles(beside)},
        {"beside_with_co_run_slowdown", quantiles(beside_with_co_run)}};
  }
  return result;
}

std::vector<GroundTruthOptions> ground_truths(const ServeBenchmarkOptions& options, const DeviceProfile& profile) {
  std::vector<GroundTruthOptions> truths;
  const auto truth = [&](GroundTruthKind kind, double error) {
    GroundTruthOptions entry;
    entry.kind = kind;
    entry.noise_cv = options.noise_cv;
    entry.model_error = error;
    entry.seed = options.seed;
    return entry;
  };
  if (!options.ground_truths.empty()) {
    for (const std::string& name : options.ground_truths) truths.push_back(truth(ground_truth_kind_from_name(name), 0));
    if (options.model_error != 0)
      for (const std::string& name : options.ground_truths)
        for (double sign : {1.0, -1.0})
          truths.push_back(truth(ground_truth_kind_from_name(name), sign * options.model_error));
    return truths;
  }
  const bool measured = !profile.measured_steps.empty();
  truths = {truth(GroundTruthKind::exact, 0), truth(GroundTruthKind::noisy, 0)};
  if (measured) truths.push_back(truth(GroundTruthKind::measured, 0));
  const GroundTruthKind realistic = measured ? GroundTruthKind::measured : GroundTruthKind::noisy;
  if (options.model_error != 0)
    for (double sign : {1.0, -1.0}) truths.push_back(truth(realistic, sign * options.model_error));
  return truths;
}

ServeReport run_simulated(const ServeBenchmarkOptions& options) {
  ServeReport report;
  const DeviceProfile profile = options.profile == "h800" ? h800_flux_profile() : read_device_profile(options.profile);
  const MaskRatioSource ratios = MaskRatioSource::named(options.trace, options.traces_dir);
  WorkloadOptions workload;
  workload.arrivals = options.arrivals;
  workload.cv = options.cv;
  workload.requests = options.requests;
  workload.seed = options.seed;
  workload.image_tokens = profile.image_tokens;
  workload.text_tokens = profile.text_tokens;
  workload.steps = profile.steps;
  const Configuration best{"cb", BalancePolicy::mask_aware};

  report.config = {{"mode", "simulated"},
                   {"devices", options.simulate},
                   {"profile", profile.name},
                   {"trace", ratios.description()},
                   {"arrivals", options.arrivals},
                   {"cv", options.arrivals == "gamma" ? options.cv : 1.0},
                   {"requests", options.requests},
                   {"max_batch", options.max_batch > 0 ? options.max_batch : choose_max_batch(profile).max_batch},
                   {"steps", profile.steps},
                   {"image_tokens", profile.image_tokens},
                   {"seed", options.seed},
                   {"balancer_model", "the profile's fit (" + profile.name + ")"}};
  if (options.max_batch == 0) report.config["max_batch_choice"] = choose_max_batch(profile).reason;
  const std::vector<GroundTruthOptions> truths = ground_truths(options, profile);
  double decision_seconds = 0, finish_time_decision_seconds = 0;
  int decisions = 0, finish_time_decisions = 0;
  const auto configurations = simulated_configurations();
  int done = 0;
  const int total = int(truths.size() * (options.rps.empty() ? 4 : options.rps.size()) * configurations.size());
  report.targets = nlohmann::json::object();
  for (const GroundTruthOptions& truth : truths) {
    const std::string label = truth.label();
    // Capacity under this ground truth: throughput of the best configuration when every
    // request is already waiting. Loads are fractions of it, so "high load" means the same
    // thing under every truth (a mis-calibrated model does not shift the system's capacity).
    WorkloadOptions flood = workload;
    flood.requests_per_second = 1e6;
    const SimulationResult saturated =
        simulate_configuration(best, options, profile, make_workload(flood, ratios), truth);
    const double capacity = saturated.outcomes.size() / saturated.makespan;
    WorkloadOptions single = workload;
    single.requests = 1;
    const double unloaded =
        simulate_configuration(best, options, profile, make_workload(single, ratios), truth).makespan;
    const double slo = options.slo_seconds > 0 ? options.slo_seconds : 5 * unloaded;
    std::vector<double> rates = options.rps;
    if (rates.empty())
      for (double fraction : {0.15, 0.3, 0.6, 0.9}) rates.push_back(round_rate(fraction * capacity));
    report.config["ground_truths"][label] = {{"capacity_rps", capacity}, {"unloaded_latency", unloaded}, {"slo_seconds", slo}};
    for (double rps : rates) {
      workload.requests_per_second = rps;
      const std::vector<TraceRequest> trace = make_workload(workload, ratios);
      for (const Configuration& configuration : configurations) {
        const SimulationResult result = simulate_configuration(configuration, options, profile, trace, truth);
        report.rows.push_back(simulated_row(configuration, rps, result, trace, result.makespan - trace.front().arrival, slo));
        report.rows.back().truth = label;
        if (configuration.policy == BalancePolicy::mask_aware && configuration.batching == "cb") {
          decision_seconds += result.scheduler_seconds;
          decisions += result.decisions;
        }
        if (configuration.policy == BalancePolicy::finish_time) {
          finish_time_decision_seconds += result.scheduler_seconds;
          finish_time_decisions += result.decisions;
        }
        report_progress(options.progress, {"simulate", ++done, total, 0});
      }
    }
    const double high = rates.back();
    const ServeRow* mask_aware = find_row(report.rows, label, high, "cb", "mask-aware");
    const ServeRow* finish_time = find_row(report.rows, label, high, "cb", "finish-time");
    const ServeRow* by_count = find_row(report.rows, label, high, "cb", "request-count");
    const ServeRow* naive = find_row(report.rows, label, high, "naive-cb", "mask-aware");
    const ServeRow* full = find_row(report.rows, label, high, "static-full", "request-count");
    report.targets[label] = {
        {"rps", high},
        {"mask_aware_p95_below_request_count", 1 - mask_aware->p95 / by_count->p95},
        {"finish_time_p95_below_request_count", 1 - finish_time->p95 / by_count->p95},
        {"cb_p95_below_naive_cb", 1 - mask_aware->p95 / naive->p95},
        {"static_full_mean_over_cb_mask_aware_mean", full->mean / mask_aware->mean},
        {"mask_aware_tail_share_from_largest", mask_aware->tail_share_from_largest},
        {"request_count_tail_share_from_largest", by_count->tail_share_from_largest},
    };
  }
  report.overheads = {{"mask_aware_decision_us", decisions ? 1e6 * decision_seconds / decisions : 0.0},
                      {"finish_time_decision_us",
                       finish_time_decisions ? 1e6 * finish_time_decision_seconds / finish_time_decisions : 0.0},
                      {"devices", options.simulate}};
  return report;
}

// Real CPU workers: the model's templates are registered, then each configuration serves the
// same requests (random masks with the trace's areas over the template images).
ServeReport run_real(const ServeBenchmarkOptions& options) {
  ServeReport report;
  if (options.images.empty()) throw Error("bench serve: no template images");
  const at::ScalarType dtype = options.dtype == "bf16" ? at::kBFloat16 : at::kFloat;
  std::vector<std::shared_ptr<InpaintPipeline>> pipelines;
  auto store = std::make_shared<engine::MemoryCaptureStore>();  // not the user's store
  std::map<std::string, std::shared_ptr<InpaintModel>> models;  // per device: its workers share the weights
  std::vector<at::Device> devices;
  if (options.devices.empty())
    devices.assign(std::max(1, options.workers), at::Device(at::kCPU));
  else
    devices = select_devices(options.devices);
  for (const at::Device& device : devices) {
    std::shared_ptr<InpaintModel>& model = models[device.str()];
    if (!model) model = load_model(options.model_dir, {dtype, device});
    pipelines.push_back(model->new_pipeline(store));
  }
  // The family's best replay: kv where it has it (Flux), else block outputs.
  const bool capture_kv = models.begin()->second->capabilities().kv_replay;
  std::vector<Image> templates;
  for (const std::string& path : options.images) {
    templates.push_back(read_image(path));
    EditRequest request;
    request.image = templates.back();
    request.steps = options.steps;
    pipelines.front()->register_template(request, capture_kv, /*capture_hidden=*/!capture_kv);
  }
  const MaskRatioSource ratios = MaskRatioSource::named(options.trace, options.traces_dir);
  WorkloadOptions workload;
  workload.requests = options.requests;
  workload.seed = options.seed;
  workload.arrivals = options.arrivals;
  workload.cv = options.cv;
  workload.requests_per_second = options.rps.empty() || options.rps.front() <= 0 ? 1e9 : options.rps.front();
  const std::vector<TraceRequest> trace = make_workload(workload, ratios);
  std::vector<EditRequest> requests;
  std::mt19937_64 rng(options.seed);
  for (size_t i = 0; i < trace.size(); ++i) {
    EditRequest request;
    request.image = templates[i % templates.size()];
    at::Tensor mask = workload::random_mask(request.image.height, request.image.width,
                                            std::clamp(trace[i].mask_ratio, 0.01, 0.95), rng);
    request.mask = Image(request.image.width, request.image.height, 1);
    const float* values = mask.contiguous().data_ptr<float>();
    for (size_t p = 0; p < request.mask.pixels.size(); ++p) request.mask.pixels[p] = values[p] > 0.5f ? 255 : 0;
    request.seed = options.seed + i;
    request.steps = options.steps;
    requests.push_back(std::move(request));
  }
  pipelines.front()->edit(requests.front());  // warm-up: first-touch of buffers and kernels

  const double rps = workload.requests_per_second >= 1e9 ? 0 : workload.requests_per_second;
  report.config = {{"mode", options.devices.empty() ? "cpu" : "devices " + options.devices},
                   {"workers", pipelines.size()},
                   {"model", options.model_dir},
                   {"dtype", options.dtype},
                   {"threads", at::get_num_threads()},
                   {"trace", ratios.description()},
                   {"arrivals", rps > 0 ? options.arrivals : "all at once"},
                   {"requests", options.requests},
                   {"max_batch", options.max_batch > 0 ? nlohmann::json(options.max_batch) : nlohmann::json("per device")},
                   {"steps", options.steps},
                   {"templates", options.images.size()}};
  double max_assembly = 0, assembly = 0, assembly_cpu = 0, decision = 0;
  int64_t steps = 0, decisions = 0;
  std::vector<Configuration> configurations{{"static-full", BalancePolicy::request_count},
                                            {"static", BalancePolicy::mask_aware},
                                            {"naive-cb", BalancePolicy::mask_aware},
                                            {"cb", BalancePolicy::mask_aware}};
  if (pipelines.size() > 1)  // policies differ only with several workers
    configurations.insert(configurations.end() - 1,
                          {{"cb", BalancePolicy::round_robin}, {"cb", BalancePolicy::request_count}});
  // The balancer routes with the profile file when one is given (as `flashps serve --profile`),
  // else with the pipeline's estimate.
  const std::string routing_profile = options.profile == "h800" ? std::string() : options.profile;
  report.config["balancer_model"] = routing_profile.empty() ? "estimated (no --profile)" : routing_profile;
  if (options.max_batch == 0) {
    const BatchSizeChoice choice = choose_max_batch(engine_device(pipelines.front(), routing_profile).profile);
    report.config["max_batch"] = choice.max_batch;
    report.config["max_batch_choice"] = choice.reason;
  }
  int done = 0;
  double slo = options.slo_seconds;
  std::vector<RealRun> real_runs;  // --compare-simulated
  for (const Configuration& configuration : configurations) {
    EngineOptions engine_options;
    engine_options.batching = batching_config(configuration.batching, options.max_batch);
    engine_options.policy = configuration.policy;
    engine_options.max_queued = requests.size() + 1;
    engine_options.record_steps = options.compare_simulated;
    std::vector<EngineDevice> devices;
    for (size_t i = 0; i < pipelines.size(); ++i)
      devices.push_back(
          engine_device(pipelines[i], routing_profile, pipelines[i]->device().str() + "/" + std::to_string(i)));
    Engine engine(std::move(devices), engine_options);
    std::vector<EditHandle> handles;
    const auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < requests.size(); ++i) {
      if (rps > 0) std::this_thread::sleep_until(start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                              std::chrono::duration<double>(trace[i].arrival)));
      handles.push_back(engine.submit(requests[i]));
    }
    std::vector<double> latencies, queueings;
    for (EditHandle& handle : handles) {
      handle.wait();
      latencies.push_back(handle.latency_seconds());
      queueings.push_back(handle.queueing_seconds());
    }
    const double duration = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (slo <= 0) slo = 5 * *std::min_element(latencies.begin(), latencies.end());
    report.rows.push_back(row_of(configuration, rps, latencies, queueings, duration, slo));
    report.rows.back().truth = "real";
    const EngineCounters counters = engine.counters();
    // Mean pre-/post-processing per request as run here (the simulator takes the profile's).
    const RealRun run{configuration, engine.step_log(),
                      counters.prepared ? counters.prepare_seconds / counters.prepared : 0.0,
                      counters.finished ? counters.finish_seconds / counters.finished : 0.0};
    report.config["pre_post_seconds"][label_of(configuration)] = {{"prepare", run.prepare_seconds},
                                                                  {"finish", run.finish_seconds}};
    if (options.compare_simulated) real_runs.push_back(run);
    if (configuration.batching == "cb") {
      max_assembly = counters.max_assembly_seconds;
      assembly = counters.steps ? counters.assembly_seconds / counters.steps : 0;
      assembly_cpu = counters.steps ? counters.assembly_cpu_seconds / counters.steps : 0;
      steps = counters.steps;
      decision = counters.decisions ? counters.decision_seconds / counters.decisions : 0;
      decisions = counters.decisions;
    }
    report_progress(options.progress, {"serve", ++done, int(configurations.size()), duration});
  }
  report.config["slo_seconds"] = slo;
  if (options.compare_simulated) {
    // The same requests on as many simulated devices, timed by the profile under each ground
    // truth: how far the simulator is from this machine. Each request is routed by the
    // pipeline's estimate from its image and mask (as the engine's balancer sees it at
    // submission) and stepped as prepared (its exact token counts, from start_edit) the way each
    // configuration's engine prepares it (serve::request_as_run): in full without mask-aware
    // batching, whose token counts differ from a replay's.
    if (routing_profile.empty()) throw Error("bench serve --compare-simulated needs --profile FILE (from `flashps profile`)");
    const DeviceProfile profile = read_device_profile(routing_profile);
    const auto prepared_trace = [&](bool mask_aware) {
      BatchingConfig batching;
      batching.mask_aware = mask_aware;
      std::vector<TraceRequest> prepared;
      for (size_t i = 0; i < requests.size(); ++i) {
        TraceRequest request = trace[i];
        if (rps <= 0) request.arrival = 0;
        const EditRequest as_run = request_as_run(requests[i], batching);
        request.work = pipelines.front()->estimate_work(as_run);
        request.work.cached = true;
        request.exact_work = pipelines.front()->start_edit(as_run)->work();
        prepared.push_back(request);
      }
      return prepared;
    };
    const std::vector<TraceRequest> mask_aware_trace = prepared_trace(true), full_trace = prepared_trace(false);
    const auto trace_for = [&](const Configuration& configuration) -> const std::vector<TraceRequest>& {
      return batching_config(configuration.batching, options.max_batch).mask_aware ? mask_aware_trace : full_trace;
    };
    ServeBenchmarkOptions simulated = options;
    simulated.simulate = static_cast<int>(pipelines.size());
    std::vector<GroundTruthOptions> truths = ground_truths(options, profile);
    // The real workers share this machine: with co-run timings in the profile, the measured
    // truth is also run with the slowdown they measured beside each other.
    if (profile.co_runners > 0)
      for (GroundTruthOptions truth : ground_truths(options, profile))
        if (truth.kind == GroundTruthKind::measured) {
          truth.shared_host = true;
          truths.push_back(truth);
        }
    for (const GroundTruthOptions& truth : truths)
      for (const Configuration& configuration : configurations) {
        const SimulationResult result =
            simulate_configuration(configuration, simulated, profile, trace_for(configuration), truth);
        report.rows.push_back(simulated_row(configuration, rps, result, trace_for(configuration), result.makespan, slo));  // from 0, as real
        report.rows.back().truth = "simulated " + truth.label();
      }
    // Diagnostic, not evidence: the most realistic truth again with each configuration's own
    // measured pre-/post-processing times from the real run above in place of the profile's
    // (the profile times them on its synthetic squares; they share numbers with the real side).
    GroundTruthOptions realistic = truths.front();
    for (const GroundTruthOptions& truth : truths)  // measured, without error; with co-running if measured
      if (truth.kind == GroundTruthKind::measured && truth.model_error == 0) realistic = truth;
    for (const RealRun& run : real_runs) {
      DeviceProfile with_real_pre_post = profile;
      with_real_pre_post.preprocess_seconds = run.prepare_seconds;
      with_real_pre_post.postprocess_seconds = run.finish_seconds;
      const SimulationResult result =
          simulate_configuration(run.configuration, simulated, with_real_pre_post, trace_for(run.configuration), realistic);
      report.rows.push_back(simulated_row(run.configuration, rps, result, trace_for(run.configuration), result.makespan, slo));
      report.rows.back().truth = "simulated " + realistic.label() + ", real pre/post";
    }
    for (const RealRun& run : real_runs)
      report.config["real_tokens_over_simulated"][label_of(run.configuration)] =
          real_tokens_over_simulated(run, trace_for(run.configuration));
    report.config["simulated_with"] = profile.name;
    report.config["real_steps_over_replayed"] = real_steps_over_replayed(real_runs, profile);
    report.config["simulated_pre_post_seconds"] = {{"prepare", profile.preprocess_seconds},
                                                   {"finish", profile.postprocess_seconds}};
  }
  report.overheads = {{"batch_assembly_ms_mean", 1e3 * assembly},
                      {"batch_assembly_ms_max", 1e3 * max_assembly},
                      {"batch_assembly_cpu_ms_mean", 1e3 * assembly_cpu},
                      {"steps", steps},
                      {"decision_us_mean", 1e6 * decision},
                      {"decisions", decisions}};
  const ServeRow* full = find_row(report.rows, "real", rps, "static-full", "request-count");
  const ServeRow* best = find_row(report.rows, "real", rps, "cb", "mask-aware");
  report.targets = {{"cb_mask_aware_throughput_over_static_full", best->throughput / full->throughput},
                    {"static_full_mean_over_cb_mask_aware_mean", full->mean / best->mean}};
  return report;
}

}  // namespace

nlohmann::json ServeReport::to_json() const {
  nlohmann::json rows_json = nlohmann::json::array();
  for (const ServeRow& row : rows)
    rows_json.push_back({{"truth", row.truth},
                         {"batching", row.batching},
                         {"policy", row.policy},
                         {"rps", row.rps},
                         {"mean", row.mean},
                         {"p50", row.p50},
                         {"p95", row.p95},
                         {"p99", row.p99},
                         {"queueing_mean", row.mean_queueing},
                         {"queueing_p95", row.p95_queueing},
                         {"throughput", row.throughput},
                         {"goodput", row.goodput},
                         {"slo_attainment", row.slo_attainment},
                         {"completed", row.completed},
                         {"tail_share_from_largest",
                          row.tail_share_from_largest < 0 ? nlohmann::json() : nlohmann::json(row.tail_share_from_largest)}});
  return {{"config", config}, {"rows", rows_json}, {"overheads", overheads}, {"targets", targets}};
}

std::string ServeReport::table() const {
  std::ostringstream out;
  out << std::fixed;
  for (const auto& [key, value] : config.items()) out << key << ": " << (value.is_string() ? value.get<std::string>() : value.dump()) << "\n";
  out << "\n" << std::left << std::setw(22) << "truth" << " " << std::setw(12) << "batching" << std::setw(15) << "policy" << std::right << std::setw(8)
      << "rps" << std::setw(9) << "mean s" << std::setw(9) << "p50" << std::setw(9) << "p95" << std::setw(9) << "p99"
      << std::setw(10) << "queue s" << std::setw(10) << "thr r/s" << std::setw(8) << "SLO %" << std::setw(9) << "tail L%"
      << "\n";
  for (const ServeRow& row : rows) {
    out << std::left << std::setw(22) << row.truth << " " << std::setw(12) << row.batching << std::setw(15) << row.policy << std::right << std::setprecision(2)
        << std::setw(8) << row.rps << std::setw(9) << row.mean << std::setw(9) << row.p50 << std::setw(9) << row.p95
        << std::setw(9) << row.p99 << std::setw(10) << row.mean_queueing << std::setprecision(3) << std::setw(10)
        << row.throughput << std::setprecision(0) << std::setw(8) << 100 * row.slo_attainment << std::setw(9);
    if (row.tail_share_from_largest < 0)
      out << "-";
    else
      out << 100 * row.tail_share_from_largest;
    out << "\n";
  }
  out << "\noverheads: " << overheads.dump() << "\n";
  out << "targets:   " << targets.dump() << "\n";
  return out.str();
}

ServeReport run_serve_benchmark(const ServeBenchmarkOptions& options) {
  if (options.max_batch < 0) throw Error("--max-batch must be at least 1 (or 0: per device)");
  if (options.requests < 1) throw Error("--requests must be at least 1");
  return options.simulate > 0 ? run_simulated(options) : run_real(options);
}

}  // namespace flashps::bench
