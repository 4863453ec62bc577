#include "bench/http_benchmark.h"

#include <flashps/flashps.hpp>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <numeric>
#include <random>
#include <sstream>
#include <thread>

#include "bench/http_bench_client.h"
#include "serve_tools/latency_summary.h"

namespace flashps::bench {
namespace {

namespace fps = flashps::sdk;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw fps::Error(FLASHPS_NOT_FOUND, path + ": cannot read");
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

std::string to_string(const std::vector<uint8_t>& bytes) { return std::string(bytes.begin(), bytes.end()); }

// The inputs as a client holds them: encoded bytes. The mask in both conventions (the in-process
// API takes white = edit; OpenAI's API alpha 0 = edit) for the same region.
struct Inputs {
  std::string image;             // PNG/JPEG
  std::string white_mask;        // PNG, 1 channel
  std::string transparent_mask;  // PNG, RGBA
};

Inputs make_inputs(const HttpBenchmarkOptions& options) {
  Inputs inputs;
  fps::Image white;
  if (!options.image.empty()) {
    inputs.image = read_file(options.image);
  } else {
    fps::Image photo(512, 512, 3);
    std::mt19937 noise(7);
    for (uint32_t y = 0; y < 512; ++y)
      for (uint32_t x = 0; x < 512; ++x)
        for (uint32_t c = 0; c < 3; ++c)
          photo.pixels[(size_t(y) * 512 + x) * 3 + c] =
              static_cast<uint8_t>((x * (c + 1) + y * (3 - c)) / 4 % 256 / 2 + noise() % 128);
    inputs.image = to_string(photo.encode("jpeg"));
  }
  const fps::Image image = fps::Image::decode(inputs.image.data(), inputs.image.size(), "image");
  if (!options.mask.empty()) {
    const std::string bytes = read_file(options.mask);
    white = fps::Image::decode(bytes.data(), bytes.size(), options.mask);
  } else {
    white = fps::Image(image.width, image.height, 1);
    for (uint32_t y = image.height / 4; y < image.height * 3 / 4; ++y)
      for (uint32_t x = image.width / 4; x < image.width * 3 / 4; ++x) white.pixels[size_t(y) * image.width + x] = 255;
  }
  fps::Image gray(white.width, white.height, 1), alpha(white.width, white.height, 4);
  for (size_t i = 0; i < size_t(white.width) * white.height; ++i) {
    const bool edit = white.pixels[i * white.channels] >= 128;
    gray.pixels[i] = edit ? 255 : 0;
    for (int c = 0; c < 3; ++c) alpha.pixels[i * 4 + c] = 0;
    alpha.pixels[i * 4 + 3] = edit ? 0 : 255;
  }
  inputs.white_mask = to_string(gray.encode("png"));
  inputs.transparent_mask = to_string(alpha.encode("png"));
  return inputs;
}

struct Sample {
  double latency = 0;
  double server_seconds = -1;  // HTTP: decode + edit + encode from Server-Timing (what in-process does too)
  double finish_seconds = -1;  // HTTP: the server's hand-over from the engine's last event to the answer
  double receive_seconds = -1;  // HTTP: httplib reading and parsing the body, after the headers
  double answer_seconds = -1;   // HTTP: base64 and JSON around the result
  double wait_seconds = -1;     // HTTP: the accepted connection waiting for a connection thread
  double headers_seconds = -1;  // HTTP: that thread reading the request line and headers
  double connect_seconds = -1;  // libcurl: until the TCP handshake is done
  double download_seconds = -1; // libcurl: the answer's first byte to its last
};

// One phase of "decode;dur=1.2, edit;dur=300.0, finish;dur=0.4, encode;dur=4.1", in seconds.
double server_timing_seconds(const std::string& header, const std::string& phase) {
  const size_t at = header.find(phase + ";dur=");
  if (at == std::string::npos) throw fps::Error(FLASHPS_ERROR, "bench http: no " + phase + " in Server-Timing: " + header);
  return std::strtod(header.c_str() + at + phase.size() + 5, nullptr) / 1000.0;
}

// An answer holds one image in the OpenAI shape. `full`: parsed as JSON. Otherwise by its
// structure only: parsing the 1.1 MB answer takes ~8 ms of this machine's CPU, and in a timed
// round that client work would take a core from the other request in flight, whose HTTP path is
// what is measured (a real client parses on its own machine).
void check_answer(const std::string& answer, bool full) {
  bool image = false;
  if (full) {
    const auto body = nlohmann::json::parse(answer);
    image = body["data"].size() == 1 && !body["data"][0]["b64_json"].get_ref<const std::string&>().empty();
  } else {
    const std::string field = "\"b64_json\":\"";
    const size_t at = answer.find(field);
    const size_t end = at == std::string::npos ? at : answer.find('"', at + field.size());
    image = answer.rfind("{\"created\":", 0) == 0 && end != std::string::npos && end > at + field.size() &&
            answer.find(field, end) == std::string::npos && answer.back() == '}';
  }
  if (!image) throw fps::Error(FLASHPS_ERROR, "bench http: an answer without its image: " + answer.substr(0, 300));
}

std::vector<Sample> run_clients(int clients, int requests, const std::function<Sample()>& one) {
  std::vector<Sample> samples;
  std::mutex mutex;
  std::atomic<int> next{0};
  std::vector<std::thread> threads;
  std::exception_ptr failure;
  for (int c = 0; c < clients; ++c)
    threads.emplace_back([&] {
      while (next.fetch_add(1) < requests) {
        try {
          const Sample sample = one();
          std::lock_guard<std::mutex> lock(mutex);
          samples.push_back(sample);
        } catch (...) {
          std::lock_guard<std::mutex> lock(mutex);
          if (!failure) failure = std::current_exception();
          return;
        }
      }
    });
  for (std::thread& thread : threads) thread.join();
  if (failure) std::rethrow_exception(failure);
  return samples;
}

nlohmann::json summary(const std::vector<double>& values) {
  return {{"p50_ms", serve::percentile(values, 0.50) * 1e3},
          {"p95_ms", serve::percentile(values, 0.95) * 1e3},
          {"p99_ms", serve::percentile(values, 0.99) * 1e3},
          {"mean_ms", values.empty() ? 0.0 : std::accumulate(values.begin(), values.end(), 0.0) / values.size() * 1e3}};
}

}  // namespace

HttpBenchmarkReport run_http_benchmark(const HttpBenchmarkOptions& options) {
  if (options.requests < options.rounds || options.clients < 1 || options.rounds < 1)
    throw fps::Error(FLASHPS_INVALID_ARGUMENT, "bench http: --requests must be >= --rounds, --clients >= 1");
  const Inputs inputs = make_inputs(options);
  fps::EngineOptions engine_options;
  engine_options.max_queued = 1024;
  engine_options.compute_nice = options.compute_nice;
  const fps::Engine engine = fps::Engine::open(options.model, engine_options);
  fps::ServerOptions server_options;
  server_options.listen = "127.0.0.1:0";
  server_options.threads = std::max(4, options.clients * 2);
  server_options.max_body_bytes = int64_t{256} << 20;
  server_options.max_pixels = 64000000;
  const fps::Server server = fps::Server::start(engine, server_options);

  fps::EditOptions edit;
  edit.steps = options.steps;
  edit.seed = 1;
  const auto in_process = [&]() {
    const auto start = Clock::now();
    const fps::Image image = fps::Image::decode(inputs.image.data(), inputs.image.size(), "image");
    const fps::Image mask = fps::Image::decode(inputs.white_mask.data(), inputs.white_mask.size(), "mask");
    const fps::EditResult result = engine.submit(image, mask, edit).result();
    const std::vector<uint8_t> png = result.image.encode("png");
    if (png.empty()) throw fps::Error(FLASHPS_ERROR, "empty result");
    return Sample{seconds_since(start)};
  };
  const int port = server.port();
  const std::string steps = std::to_string(options.steps);
  const std::vector<FormPart> form = {{"image", inputs.image, "image", "application/octet-stream"},
                                      {"mask", inputs.transparent_mask, "mask.png", "image/png"},
                                      {"prompt", "", "", ""},
                                      {"response_format", "b64_json", "", ""},
                                      {"steps", steps, "", ""},
                                      {"seed", "1", "", ""}};
  bool full_checks = true;  // the warm-up's answers are parsed in full, the timed rounds' checked (see check_answer)
  const auto over_http = [&](HttpClientKind kind) {
    const auto start = Clock::now();
    const HttpAnswer answer = post_form(kind, port, "/v1/images/edits", form);
    const double latency = seconds_since(start);
    if (answer.status != 200)
      throw fps::Error(FLASHPS_ERROR, "bench http: HTTP " + std::to_string(answer.status) + ": " + answer.body.substr(0, 300));
    check_answer(answer.body, full_checks);
    const std::string& timing = answer.server_timing;
    const bool client_clock =
        answer.connected_seconds >= 0 && answer.first_byte_seconds >= 0 && answer.total_seconds >= 0;
    return Sample{latency,
                  server_timing_seconds(timing, "decode") + server_timing_seconds(timing, "edit") +
                      server_timing_seconds(timing, "encode"),
                  server_timing_seconds(timing, "finish"),
                  server_timing_seconds(timing, "receive"),
                  server_timing_seconds(timing, "answer"),
                  server_timing_seconds(timing, "wait"),
                  server_timing_seconds(timing, "headers"),
                  client_clock ? answer.connected_seconds : -1,
                  client_clock ? answer.total_seconds - answer.first_byte_seconds : -1};
  };

  // One side per path: in-process, then HTTP through each client this build has.
  struct Side {
    std::string name;
    std::function<Sample()> one;
    std::vector<Sample> samples;
    double seconds = 0;
  };
  std::vector<Side> sides;
  sides.push_back({"in-process", in_process, {}, 0});
  for (const HttpClientKind kind : {HttpClientKind::libcurl, HttpClientKind::httplib})
    if (client_available(kind))
      sides.push_back({std::string("HTTP ") + client_name(kind), [&over_http, kind] { return over_http(kind); }, {}, 0});

  // Warm every path (first-call allocations, the model's first step), then rounds that rotate
  // the order of the sides, so drift over the run spreads over all of them.
  for (Side& side : sides) run_clients(1, 2, side.one);
  full_checks = false;
  const int per_round = options.requests / options.rounds;
  for (int round = 0; round < options.rounds; ++round) {
    for (size_t k = 0; k < sides.size(); ++k) {
      Side& side = sides[(k + round) % sides.size()];
      const auto start = Clock::now();
      std::vector<Sample> samples = run_clients(options.clients, per_round, side.one);
      side.seconds += seconds_since(start);
      side.samples.insert(side.samples.end(), samples.begin(), samples.end());
      report_progress(options.progress, {"bench http", static_cast<int>(round * sides.size() + k + 1),
                                         static_cast<int>(options.rounds * sides.size()), 0});
    }
  }

  HttpBenchmarkReport report;
  const fps::Image image = fps::Image::decode(inputs.image.data(), inputs.image.size(), "image");
  report.results = {{"image", std::to_string(image.width) + "x" + std::to_string(image.height)},
                    {"image_bytes", inputs.image.size()},
                    {"requests_per_side", sides.front().samples.size()},
                    {"clients", options.clients},
                    {"steps", options.steps},
                    {"compute_nice", options.compute_nice},
                    {"sides", nlohmann::json::array()}};
  for (const Side& side : sides) {
    std::vector<double> latency, overhead, finish, receive, answer, wait, headers, elsewhere, connect, download;
    for (const Sample& sample : side.samples) latency.push_back(sample.latency);
    nlohmann::json entry = {{"path", side.name},
                            {"requests_per_second", side.samples.size() / side.seconds},
                            {"latency", summary(latency)}};
    if (side.name != "in-process") {
      for (const Sample& sample : side.samples) {
        overhead.push_back(sample.latency - sample.server_seconds);
        finish.push_back(sample.finish_seconds);
        receive.push_back(sample.receive_seconds);
        answer.push_back(sample.answer_seconds);
        wait.push_back(sample.wait_seconds);
        headers.push_back(sample.headers_seconds);
        // Connecting, sending, writing and reading the answer: what no server phase covers.
        elsewhere.push_back(sample.latency - sample.server_seconds - sample.finish_seconds - sample.receive_seconds -
                            sample.answer_seconds - sample.wait_seconds - sample.headers_seconds);
        if (sample.connect_seconds >= 0) {
          connect.push_back(sample.connect_seconds);
          download.push_back(sample.download_seconds);
        }
      }
      entry["overhead"] = summary(overhead);
      entry["overhead_of_which_finish"] = summary(finish);
      entry["overhead_of_which_receive"] = summary(receive);
      entry["overhead_of_which_answer"] = summary(answer);
      entry["overhead_of_which_wait"] = summary(wait);
      entry["overhead_of_which_headers"] = summary(headers);
      entry["overhead_of_which_transfer"] = summary(elsewhere);
      // The client's own clock splits the rest (libcurl only): connecting, and reading the answer.
      const bool client_clock = connect.size() == side.samples.size();
      if (client_clock) {
        entry["transfer_of_which_connect"] = summary(connect);
        entry["transfer_of_which_download"] = summary(download);
      }
      // What the tail is made of: percentiles of the parts do not add up, so the requests whose
      // overhead is in the top 5% are averaged part by part.
      std::vector<size_t> order(overhead.size());
      std::iota(order.begin(), order.end(), size_t{0});
      std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return overhead[a] > overhead[b]; });
      order.resize(std::max<size_t>(1, order.size() / 20));
      const auto tail_mean_ms = [&](const std::vector<double>& values) {
        double sum = 0;
        for (const size_t index : order) sum += values[index];
        return sum / order.size() * 1e3;
      };
      nlohmann::json tail = {{"requests", order.size()},
                             {"overhead", tail_mean_ms(overhead)},
                             {"receive", tail_mean_ms(receive)},
                             {"finish", tail_mean_ms(finish)},
                             {"answer", tail_mean_ms(answer)},
                             {"wait", tail_mean_ms(wait)},
                             {"headers", tail_mean_ms(headers)},
                             {"rest", tail_mean_ms(elsewhere)}};
      if (client_clock) {
        tail["rest_connect"] = tail_mean_ms(connect);
        tail["rest_download"] = tail_mean_ms(download);
      }
      entry["slowest_5_percent_mean_ms"] = tail;
    }
    report.results["sides"].push_back(entry);
  }
  return report;
}

std::string HttpBenchmarkReport::table() const {
  const auto& r = results;
  char text[2048];
  std::snprintf(text, sizeof text,
                "bench http: %d requests per side, %d clients, %d step(s), %s image (%zu bytes), rotating rounds, "
                "compute nice +%d\n"
                "%-16s %8s %9s %9s %9s\n",
                r["requests_per_side"].get<int>(), r["clients"].get<int>(), r["steps"].get<int>(),
                r["image"].get<std::string>().c_str(), r["image_bytes"].get<size_t>(), r["compute_nice"].get<int>(), "path", "req/s", "P50 ms", "P95 ms",
                "P99 ms");
  std::string out = text;
  for (const auto& side : r["sides"]) {
    std::snprintf(text, sizeof text, "%-16s %8.2f %9.1f %9.1f %9.1f\n", side["path"].get<std::string>().c_str(),
                  side["requests_per_second"].get<double>(), side["latency"]["p50_ms"].get<double>(),
                  side["latency"]["p95_ms"].get<double>(), side["latency"]["p99_ms"].get<double>());
    out += text;
  }
  for (const auto& side : r["sides"]) {
    if (!side.contains("overhead")) continue;
    const auto& overhead = side["overhead"];
    std::snprintf(text, sizeof text,
                  "%s overhead per request (client latency - server decode+edit+encode): P50 %.2f ms, P95 %.2f ms, "
                  "P99 %.2f ms\n",
                  side["path"].get<std::string>().c_str(), overhead["p50_ms"].get<double>(),
                  overhead["p95_ms"].get<double>(), overhead["p99_ms"].get<double>());
    out += text;
    const auto part = [&](const char* key, const char* what) {
      const auto& value = side[key];
      std::snprintf(text, sizeof text, "  of which %-48s P50 %.2f ms, P95 %.2f ms\n", what, value["p50_ms"].get<double>(),
                    value["p95_ms"].get<double>());
      out += text;
    };
    part("overhead_of_which_wait", "wait (the connection for a server thread):");
    part("overhead_of_which_headers", "headers (that thread reads them):");
    part("overhead_of_which_receive", "receive (httplib reads + parses the body):");
    part("overhead_of_which_finish", "finish (hand-over from the engine's last event):");
    part("overhead_of_which_answer", "answer (base64 + JSON):");
    part("overhead_of_which_transfer", "the rest (connect, send, write, client read):");
    if (side.contains("transfer_of_which_connect")) {
      part("transfer_of_which_connect", "  connecting:");
      part("transfer_of_which_download", "  the answer, its first byte to its last:");
    }
    const auto& tail = side["slowest_5_percent_mean_ms"];
    std::snprintf(text, sizeof text,
                  "  its slowest %d requests, mean ms: overhead %.2f = wait %.2f + headers %.2f + receive %.2f + "
                  "finish %.2f + answer %.2f + rest %.2f",
                  tail["requests"].get<int>(), tail["overhead"].get<double>(), tail["wait"].get<double>(),
                  tail["headers"].get<double>(), tail["receive"].get<double>(),
                  tail["finish"].get<double>(), tail["answer"].get<double>(), tail["rest"].get<double>());
    out += text;
    if (tail.contains("rest_connect")) {
      std::snprintf(text, sizeof text, " (connecting %.2f, the answer's bytes %.2f)",
                    tail["rest_connect"].get<double>(), tail["rest_download"].get<double>());
      out += text;
    }
    out += "\n";
  }
  return out;
}

}  // namespace flashps::bench
