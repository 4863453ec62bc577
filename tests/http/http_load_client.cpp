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
//                      works; nothing to check but that the server stays healthy
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
// flashps_edits_total's outcomes match what it saw (cancelled, deadline_exceeded and failed
// exactly; done up to the edits of openai_disconnect requests the client never saw answered,
// accounting for the 429s it never saw either), that no 500/502 answers were given, and that the
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
// tests/CMakeLists.txt globs tests/**/*.cpp into the Catch2 executable, whose precompiled header
// includes Catch2: there this file compiles to nothing (it has its own main). Build it on its own.
#if !defined(CATCH_VERSION_MAJOR)
#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }
void sleep_seconds(double seconds) { std::this_thread::sleep_for(std::chrono::duration<double>(seconds)); }

// ---------------------------------------------------------------- arguments

struct Args {
  int port = 0;
  int requests = 500;
  int clients = 32;
  uint64_t seed = 1;
  std::string image, mask, alpha_mask, report;
  bool check_metrics = false;
  bool allow_draining = false;   // a SIGTERM may come: 503 draining is legal, and the exit after it
  bool server_may_die = false;   // a SIGKILL may come: transport errors end the run quietly
  double edit_timeout = 300;     // seconds an accepted edit may take to finish
  double retry_seconds = 60;     // how long a request keeps retrying 429 / 503 too_many_connections
  double poll_seconds = 0.15;    // status poll interval (jittered)
};

[[noreturn]] void usage(const std::string& problem) {
  std::cerr << "http_load_client: " << problem << "\n"
            << "usage: http_load_client --port P --image FILE --mask FILE [--alpha-mask FILE] [--requests N]\n"
               "         [--clients C] [--seed S] [--report FILE] [--check-metrics] [--allow-draining]\n"
               "         [--server-may-die] [--edit-timeout S] [--retry-seconds S]\n"
               "  --mask: white-on-black (native API); --alpha-mask: alpha 0 = edit (OpenAI API), default a\n"
               "  rectangle in the middle of the image, made here\n";
  std::exit(2);
}

Args parse_args(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string name = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(name + " needs a value");
      return argv[++i];
    };
    try {
      if (name == "--port") args.port = std::stoi(value());
      else if (name == "--requests") args.requests = std::stoi(value());
      else if (name == "--clients") args.clients = std::stoi(value());
      else if (name == "--seed") args.seed = std::stoull(value());
      else if (name == "--image") args.image = value();
      else if (name == "--mask") args.mask = value();
      else if (name == "--alpha-mask") args.alpha_mask = value();
      else if (name == "--report") args.report = value();
      else if (name == "--edit-timeout") args.edit_timeout = std::stod(value());
      else if (name == "--retry-seconds") args.retry_seconds = std::stod(value());
      else if (name == "--check-metrics") args.check_metrics = true;
      else if (name == "--allow-draining") args.allow_draining = true;
      else if (name == "--server-may-die") args.server_may_die = true;
      else if (name == "--help" || name == "-h") usage("help");
      else usage("unknown argument " + name);
    } catch (const std::logic_error&) {
      usage("bad value for " + name);
    }
  }
  if (args.port <= 0 || args.port > 65535) usage("--port is required (1-65535)");
  if (args.image.empty() || args.mask.empty()) usage("--image and --mask are required");
  if (args.requests < 0 || args.clients <= 0) usage("--requests must be >= 0 and --clients > 0");
  return args;
}

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) usage("cannot read " + path);
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

// ---------------------------------------------------------------- base64, PNG

std::string base64_encode(const std::string& bytes) {
  static const char* table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    out += table[v >> 18];
    out += table[(v >> 12) & 63];
    out += table[(v >> 6) & 63];
    out += table[v & 63];
  }
  if (i + 1 == bytes.size()) {
    const uint32_t v = uint8_t(bytes[i]) << 16;
    out += table[v >> 18];
    out += table[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == bytes.size()) {
    const uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8);
    out += table[v >> 18];
    out += table[(v >> 12) & 63];
    out += table[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

std::optional<std::string> base64_decode(const std::string& text) {
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (const char c : text) {
    int v;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '+') v = 62;
    else if (c == '/') v = 63;
    else if (c == '=') break;
    else return std::nullopt;
    buffer = (buffer << 6) | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += char((buffer >> bits) & 0xff);
    }
  }
  return out;
}

bool is_png(const std::string& bytes) { return bytes.size() > 8 && bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0; }
bool is_jpeg(const std::string& bytes) { return bytes.size() > 3 && uint8_t(bytes[0]) == 0xff && uint8_t(bytes[1]) == 0xd8; }

// Width and height of a PNG (IHDR) or JPEG (the first SOFn marker).
std::optional<std::pair<int, int>> image_size(const std::string& bytes) {
  auto be16 = [&](size_t at) { return (uint8_t(bytes[at]) << 8) | uint8_t(bytes[at + 1]); };
  auto be32 = [&](size_t at) { return (uint32_t(be16(at)) << 16) | uint32_t(be16(at + 2)); };
  if (is_png(bytes) && bytes.size() >= 24) return std::make_pair(int(be32(16)), int(be32(20)));
  if (!is_jpeg(bytes)) return std::nullopt;
  size_t at = 2;
  while (at + 9 < bytes.size()) {
    if (uint8_t(bytes[at]) != 0xff) return std::nullopt;
    const int marker = uint8_t(bytes[at + 1]);
    if (marker == 0xff) { ++at; continue; }
    if (marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc)
      return std::make_pair(be16(at + 7), be16(at + 5));
    at += 2 + size_t(be16(at + 2));
  }
  return std::nullopt;
}

uint32_t crc32(const std::string& bytes) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  uint32_t c = 0xffffffffu;
  for (const char b : bytes) c = table[(c ^ uint8_t(b)) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

void put32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += char((v >> shift) & 0xff);
}

// An RGBA PNG, opaque black, with a fully transparent rectangle (the OpenAI "edit here" region):
// the middle half of the image. Deflate with stored blocks: no zlib needed.
std::string alpha_mask_png(int width, int height) {
  std::string raw;
  raw.reserve(size_t(height) * (1 + size_t(width) * 4));
  for (int y = 0; y < height; ++y) {
    raw += '\0';  // filter: none
    for (int x = 0; x < width; ++x) {
      const bool edit = x >= width / 4 && x < width * 3 / 4 && y >= height / 4 && y < height * 3 / 4;
      raw += std::string("\0\0\0", 3);
      raw += char(edit ? 0 : 255);
    }
  }
  std::string zlib = "\x78\x01";
  for (size_t at = 0; at < raw.size() || at == 0; at += 65535) {
    const size_t length = std::min<size_t>(65535, raw.size() - at);
    const bool last = at + length >= raw.size();
    zlib += char(last ? 1 : 0);
    zlib += char(length & 0xff);
    zlib += char(length >> 8);
    zlib += char(~length & 0xff);
    zlib += char((~length >> 8) & 0xff);
    zlib.append(raw, at, length);
    if (last) break;
  }
  uint32_t a = 1, b = 0;
  for (const char c : raw) {
    a = (a + uint8_t(c)) % 65521;
    b = (b + a) % 65521;
  }
  put32(zlib, (b << 16) | a);
  auto chunk = [](std::string& out, const std::string& type, const std::string& data) {
    put32(out, uint32_t(data.size()));
    out += type + data;
    put32(out, crc32(type + data));
  };
  std::string ihdr;
  put32(ihdr, uint32_t(width));
  put32(ihdr, uint32_t(height));
  ihdr += std::string("\x08\x06\x00\x00\x00", 5);  // 8-bit RGBA
  std::string png = "\x89PNG\r\n\x1a\n";
  chunk(png, "IHDR", ihdr);
  chunk(png, "IDAT", zlib);
  chunk(png, "IEND", "");
  return png;
}

// ---------------------------------------------------------------- the run's shared state

enum class Kind { plain, cancel, deadline, upload_disconnect, sse_disconnect, openai, openai_disconnect, count };
constexpr int kKinds = int(Kind::count);
const char* const kKindNames[kKinds] = {"plain",          "cancel", "deadline",         "upload_disconnect",
                                        "sse_disconnect", "openai", "openai_disconnect"};
constexpr int kKindWeights[kKinds] = {22, 16, 14, 10, 14, 14, 10};

struct Record {
  Kind kind = Kind::plain;
  std::vector<std::string> ids;  // the edits this request created and the client knows of
  std::string final_class;       // how the request ended (set exactly once)
  int ends = 0;
  double latency = 0;
  int retries_429 = 0, retries_503 = 0;
};

struct Edit {  // what has been observed of one edit id
  bool finished = false;
  std::string outcome;
  int step = -1;
  int observations = 0;
};

const std::set<std::string> kUnfinishedStatuses = {"queued", "preparing", "ready", "running", "finishing"};
const std::set<std::string> kOutcomes = {"done", "failed", "cancelled", "deadline_exceeded"};

struct Run {
  Args args;
  std::string image, mask, alpha_mask;
  std::string image_type;
  std::vector<Record> records;
  std::atomic<int> next{0};
  std::atomic<int> completed{0};
  std::atomic<bool> server_gone{false};
  std::atomic<bool> draining_seen{false};
  Clock::time_point start = Clock::now();

  std::mutex mutex;  // guards everything below
  std::vector<std::string> violations;
  std::map<std::string, Edit> edits;
  std::map<int, int64_t> statuses;  // HTTP statuses the client received
  int64_t seen_429 = 0, seen_503_connections = 0, transport_errors = 0;
  int64_t openai_timed_out = 0;  // openai_disconnect requests that hung up before an answer

  void violate(int number, const std::string& what) {
    std::lock_guard<std::mutex> lock(mutex);
    violations.push_back("request " + std::to_string(number) + " (" + kKindNames[int(records[size_t(number)].kind)] +
                         "): " + what);
    if (violations.size() <= 40) std::cerr << "VIOLATION: " << violations.back() << "\n";
  }
  void violate_run(const std::string& what) {
    std::lock_guard<std::mutex> lock(mutex);
    violations.push_back(what);
    std::cerr << "VIOLATION: " << what << "\n";
  }
  void count_status(int status) {
    std::lock_guard<std::mutex> lock(mutex);
    ++statuses[status];
  }
  void end(int number, const std::string& final_class, Clock::time_point started) {
    Record& record = records[size_t(number)];
    {
      std::lock_guard<std::mutex> lock(mutex);
      ++record.ends;
      if (record.ends == 1) {
        record.final_class = final_class;
        record.latency = seconds_since(started);
      }
    }
    if (record.ends != 1) violate(number, "ended " + std::to_string(record.ends) + " times (" + final_class + ")");
    const int done = ++completed;
    const int tenth = std::max(1, args.requests / 10);
    if (done % tenth == 0 || done == args.requests) {
      std::printf("progress: %d/%d requests ended, %.1f s\n", done, args.requests, seconds_since(start));
      std::fflush(stdout);
    }
  }
};

std::string excerpt(const std::string& body) {
  std::string text = body.substr(0, 300);
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 32 || static_cast<unsigned char>(c) > 126) c = '?';
  return text;
}

std::string error_code(const std::string& body) {
  try {
    const json parsed = json::parse(body);
    const json& code = parsed.at("error").at("code");
    return code.is_string() ? code.get<std::string>() : "null";
  } catch (const std::exception&) {
    return "(no JSON error)";
  }
}

std::unique_ptr<httplib::Client> make_client(const Run& run, double read_timeout_seconds) {
  auto client = std::make_unique<httplib::Client>("127.0.0.1", run.args.port);
  client->set_connection_timeout(10, 0);
  const auto whole = static_cast<time_t>(read_timeout_seconds);
  client->set_read_timeout(whole, static_cast<time_t>((read_timeout_seconds - double(whole)) * 1e6));
  client->set_write_timeout(30, 0);
  return client;
}

// ---------------------------------------------------------------- one request

class Request {
 public:
  Request(Run& run, int number)
      : run_(run), number_(number), record_(run.records[size_t(number)]), rng_(run.args.seed * 1000003u + uint64_t(number)),
        client_(make_client(run, 600)) {}

  void go() {
    try {
      switch (record_.kind) {
        case Kind::plain: native(Kind::plain); break;
        case Kind::cancel: native(Kind::cancel); break;
        case Kind::deadline: native(Kind::deadline); break;
        case Kind::sse_disconnect: native(Kind::sse_disconnect); break;
        case Kind::upload_disconnect: upload_disconnect(); break;
        case Kind::openai: openai(false); break;
        case Kind::openai_disconnect: openai(true); break;
        case Kind::count: break;
      }
    } catch (const std::exception& error) {
      run_.violate(number_, std::string("client exception: ") + error.what());
      finish("error");
    }
    if (!ended_) {
      run_.violate(number_, "the client did not classify this request");
      finish("error");
    }
  }

 private:
  Run& run_;
  const int number_;
  Record& record_;
  std::mt19937_64 rng_;
  std::unique_ptr<httplib::Client> client_;
  const Clock::time_point started_ = Clock::now();
  bool ended_ = false;

  double uniform(double low, double high) { return std::uniform_real_distribution<double>(low, high)(rng_); }
  int uniform_int(int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng_); }
  void violate(const std::string& what) { run_.violate(number_, what); }
  void finish(const std::string& final_class) {
    if (ended_) {
      violate("ended twice: " + final_class);
      return;
    }
    ended_ = true;
    run_.end(number_, final_class, started_);
  }

  // A transport error: a violation, unless the server is allowed to go away (then it is
  // "server_gone" and the run winds down). Returns the final class to end the request with.
  std::string transport_error(const std::string& what, httplib::Error error) {
    {
      std::lock_guard<std::mutex> lock(run_.mutex);
      ++run_.transport_errors;
    }
    // A drained server stops listening once its edits are done: a transport error is its exit.
    if (run_.args.server_may_die || run_.args.allow_draining) {
      run_.server_gone = true;
      return "server_gone";
    }
    violate(what + ": transport error " + httplib::to_string(error));
    return "error";
  }

  // A 5xx answer: false (and a violation) unless it is one the run allows: 503 too_many_connections
  // (a capacity answer, retried), and with --allow-draining 503 draining or 503 cancelled (an OpenAI
  // edit the drain cancelled).
  bool acceptable_5xx(int status, const std::string& body, const std::string& where) {
    if (status < 500) return true;
    const std::string code = error_code(body);
    if (status == 503 && code == "too_many_connections") return true;
    if (status == 503 && (code == "draining" || code == "cancelled") && run_.args.allow_draining) {
      run_.draining_seen = true;
      return true;
    }
    violate(where + ": HTTP " + std::to_string(status) + " " + excerpt(body));
    return false;
  }
  bool acceptable_5xx(const httplib::Response& response, const std::string& where) {
    return acceptable_5xx(response.status, response.body, where);
  }

  // Any answer other than the expected status: a violation unless it is an allowed 5xx.
  void unexpected(const httplib::Response& response, const std::string& where, const std::string& expected) {
    if (response.status < 500) violate(where + ": expected " + expected + ", got HTTP " + std::to_string(response.status) + " " + excerpt(response.body));
    else acceptable_5xx(response, where);
  }

  // Starts following an edit id; false when the id was seen before (ids must be unique).
  bool track(const std::string& id) {
    std::lock_guard<std::mutex> lock(run_.mutex);
    const bool fresh = run_.edits.emplace(id, Edit{}).second;
    record_.ids.push_back(id);
    return fresh;
  }

  // POST with retries for 429 and 503 too_many_connections. Returns the final answer, or nullopt
  // with the request already ended (gave up, transport error, refused while draining).
  template <typename Send>
  std::optional<httplib::Result> post_with_retries(const std::string& where, Send send,
                                                   bool transport_error_is_answer = false) {
    const auto first = Clock::now();
    for (;;) {
      httplib::Result result = send();
      if (!result) {
        if (transport_error_is_answer) return result;
        finish(transport_error(where, result.error()));
        return std::nullopt;
      }
      run_.count_status(result->status);
      const std::string code = result->status == 429 || result->status == 503 ? error_code(result->body) : "";
      if (result->status == 429) {
        if (code != "queue_full") violate(where + ": 429 with code " + code);
        if (result->get_header_value("Retry-After").empty()) violate(where + ": 429 without Retry-After");
        std::lock_guard<std::mutex> lock(run_.mutex);
        ++run_.seen_429;
        ++record_.retries_429;
      } else if (result->status == 503 && code == "too_many_connections") {
        std::lock_guard<std::mutex> lock(run_.mutex);
        ++run_.seen_503_connections;
        ++record_.retries_503;
      } else if (result->status == 503 && code == "draining" && run_.args.allow_draining) {
        run_.draining_seen = true;
        finish("refused_draining");
        return std::nullopt;
      } else {
        return result;
      }
      if (seconds_since(first) > run_.args.retry_seconds) {
        violate(where + ": still refused (" + std::to_string(result->status) + " " + code + ") after " +
                std::to_string(record_.retries_429 + record_.retries_503) + " retries in " +
                std::to_string(int(run_.args.retry_seconds)) + " s");
        finish("gave_up");
        return std::nullopt;
      }
      sleep_seconds(uniform(0.05, 0.25));
    }
  }

  // Checks one view of an edit against everything seen of it before.
  void observe(const std::string& id, const json& edit, const std::string& where) {
    auto problem = [&](const std::string& what) { violate(id + " " + where + ": " + what + ": " + edit.dump().substr(0, 400)); };
    if (!edit.is_object()) return problem("not a JSON object");
    if (edit.value("id", "") != id) problem("names another id");
    if (edit.value("object", "") != "edit") problem("object is not \"edit\"");
    const auto finished = edit.find("finished");
    const auto status = edit.find("status");
    if (finished == edit.end() || !finished->is_boolean() || status == edit.end() || !status->is_string())
      return problem("no boolean finished or string status");
    const bool is_finished = finished->get<bool>();
    const std::string status_text = status->get<std::string>();
    std::string outcome;
    if (is_finished) {
      outcome = edit.value("outcome", "");
      if (!kOutcomes.count(outcome)) problem("finished without a known outcome");
      const std::string expected_status = outcome == "deadline_exceeded" ? "failed" : outcome;
      if (status_text != expected_status) problem("status " + status_text + " with outcome " + outcome);
      if (outcome == "done" && !edit.contains("stats")) problem("done without stats");
    } else {
      if (!kUnfinishedStatuses.count(status_text)) problem("unfinished with status " + status_text);
      if (edit.contains("outcome")) problem("unfinished with an outcome");
    }
    const int step = edit.value("step", -1), steps = edit.value("steps", -1);
    if (step < 0 || steps < 0 || (steps > 0 && step > steps)) problem("step " + std::to_string(step) + " of " + std::to_string(steps));

    std::string conflict;
    {
      std::lock_guard<std::mutex> lock(run_.mutex);
      Edit& seen = run_.edits[id];
      ++seen.observations;
      if (seen.finished && !is_finished) conflict += "finished before (" + seen.outcome + "), unfinished now; ";
      if (seen.finished && is_finished && seen.outcome != outcome)
        conflict += "two outcomes: " + seen.outcome + " before, " + outcome + " now; ";
      if (step < seen.step) conflict += "progress went back from step " + std::to_string(seen.step) + "; ";
      seen.step = std::max(seen.step, step);
      if (is_finished && !seen.finished) {
        seen.finished = true;
        seen.outcome = outcome;
      }
    }
    if (!conflict.empty()) problem(conflict);
  }

  // GET /v1/edits/{id} until finished (or the edit timeout). Returns the outcome, "" when the
  // request has been ended already (transport error), "timeout" when it never finished.
  std::string poll(const std::string& id) {
    const auto first = Clock::now();
    const std::string where = "GET /v1/edits/" + id;
    std::string last = "(no answer yet)";
    for (;; sleep_seconds(run_.args.poll_seconds * uniform(0.7, 1.3))) {
      if (seconds_since(first) > run_.args.edit_timeout) {
        violate(id + " never finished: after " + std::to_string(int(run_.args.edit_timeout)) + " s it reads " + last);
        return "timeout";
      }
      httplib::Result result = client_->Get("/v1/edits/" + id);
      if (!result) {
        finish(transport_error(where, result.error()));
        return "";
      }
      run_.count_status(result->status);
      if (result->status == 503 && error_code(result->body) == "too_many_connections") continue;
      if (result->status != 200) {
        unexpected(*result, where, "200");
        finish("error");
        return "";
      }
      json edit;
      try {
        edit = json::parse(result->body);
      } catch (const std::exception&) {
        violate(where + ": not JSON: " + excerpt(result->body));
        finish("error");
        return "";
      }
      observe(id, edit, "status poll");
      last = excerpt(result->body);
      if (!edit.value("finished", false)) continue;
      // One more look: a finished edit must stay as it is.
      httplib::Result again = client_->Get("/v1/edits/" + id);
      if (again) {
        run_.count_status(again->status);
        if (again->status == 200) {
          try {
            observe(id, json::parse(again->body), "status re-poll");
          } catch (const std::exception&) {
            violate(where + " (re-poll): not JSON");
          }
        } else {
          unexpected(*again, where + " (re-poll)", "200");
        }
      }
      return edit.value("outcome", "");
    }
  }

  // GET .../result must match the outcome: 200 PNG for done, 409 cancelled, 504 deadline_exceeded.
  void check_result(const std::string& id, const std::string& outcome) {
    const std::string where = "GET /v1/edits/" + id + "/result (outcome " + outcome + ")";
    for (int attempt = 0;; ++attempt) {
      httplib::Result result = client_->Get("/v1/edits/" + id + "/result");
      if (!result) {
        transport_error(where, result.error());
        return;
      }
      run_.count_status(result->status);
      if (result->status == 503 && error_code(result->body) == "too_many_connections" && attempt < 100) {
        sleep_seconds(0.1);
        continue;
      }
      const std::string code = result->status == 200 ? "" : error_code(result->body);
      if (outcome == "done") {
        if (result->status != 200) violate(where + ": HTTP " + std::to_string(result->status) + " " + excerpt(result->body));
        else if (result->get_header_value("Content-Type") != "image/png" || !is_png(result->body))
          violate(where + ": not a PNG (" + result->get_header_value("Content-Type") + ", " +
                  std::to_string(result->body.size()) + " bytes)");
      } else if (outcome == "cancelled") {
        if (result->status != 409 || code != "cancelled")
          violate(where + ": expected 409 cancelled, got " + std::to_string(result->status) + " " + excerpt(result->body));
      } else if (outcome == "deadline_exceeded") {
        if (result->status != 504 || code != "deadline_exceeded")
          violate(where + ": expected 504 deadline_exceeded, got " + std::to_string(result->status) + " " + excerpt(result->body));
      } else {  // failed: the failure's status, code failed
        if (result->status < 400 || code != "failed")
          violate(where + ": expected an error with code failed, got " + std::to_string(result->status) + " " + excerpt(result->body));
      }
      return;
    }
  }

  std::string native_body(int steps, double deadline_seconds) {
    json body = {{"image", base64_encode(run_.image)}, {"mask", base64_encode(run_.mask)}, {"steps", steps},
                 {"seed", uniform_int(0, 1000000)}, {"prompt", "a red barn in an autumn field"}};
    if (deadline_seconds > 0) body["deadline_seconds"] = deadline_seconds;
    return body.dump();
  }

  // Submits a native edit. Returns its id, or "" with the request ended.
  std::string submit(const std::string& body) {
    const auto answer = post_with_retries("POST /v1/edits", [&] {
      return client_->Post("/v1/edits", body, "application/json");
    });
    if (!answer) return "";
    const httplib::Response& response = **answer;
    if (response.status != 202) {
      unexpected(response, "POST /v1/edits", "202");
      finish("error");
      return "";
    }
    json edit;
    try {
      edit = json::parse(response.body);
    } catch (const std::exception&) {
      violate("POST /v1/edits: 202 with a body that is not JSON: " + excerpt(response.body));
      finish("error");
      return "";
    }
    const std::string id = edit.value("id", "");
    if (id.size() != 21 || id.compare(0, 5, "edit_") != 0) {
      violate("POST /v1/edits: 202 without a valid id: " + excerpt(response.body));
      finish("error");
      return "";
    }
    if (response.get_header_value("Location") != "/v1/edits/" + id) violate("POST /v1/edits: Location is " + response.get_header_value("Location"));
    if (!track(id)) violate("POST /v1/edits: id " + id + " was given out before");
    observe(id, edit, "POST answer");
    return id;
  }

  bool outcome_allowed(Kind kind, const std::string& outcome) {
    if (run_.args.allow_draining && outcome == "cancelled") return true;  // a drain cancels what is left
    switch (kind) {
      case Kind::cancel: return outcome == "cancelled" || outcome == "done";
      case Kind::deadline: return outcome == "deadline_exceeded" || outcome == "done";
      default: return outcome == "done";
    }
  }

  void native(Kind kind) {
    const int steps = kind == Kind::deadline ? 30 : kind == Kind::cancel ? uniform_int(2, 3) : uniform_int(1, 3);
    const double deadline = kind == Kind::deadline ? uniform(0.001, 0.15) : 0;
    const double cancel_after = kind == Kind::cancel ? uniform(0.0, 0.6) : 0;
    const std::string id = submit(native_body(steps, deadline));
    if (id.empty()) return;

    if (kind == Kind::cancel) {
      sleep_seconds(cancel_after);
      httplib::Result result = client_->Delete("/v1/edits/" + id);
      if (!result) return finish(transport_error("DELETE /v1/edits/" + id, result.error()));
      run_.count_status(result->status);
      if (result->status == 200) {
        try {
          observe(id, json::parse(result->body), "DELETE answer");
        } catch (const std::exception&) {
          violate("DELETE /v1/edits/" + id + ": not JSON: " + excerpt(result->body));
        }
      } else {
        unexpected(*result, "DELETE /v1/edits/" + id, "200");
      }
    } else if (kind == Kind::sse_disconnect) {
      sse_first_event(id);
      if (ended_) return;
    }

    const std::string outcome = poll(id);
    if (ended_) return;
    if (outcome == "timeout") return finish("never_finished");
    if (!outcome_allowed(kind, outcome)) violate(id + ": outcome " + outcome + " is not one this kind may end with");
    check_result(id, outcome);
    finish(outcome);
  }

  // GET /v1/edits/{id}/events, hang up after the first event (which must describe this edit).
  void sse_first_event(const std::string& id) {
    std::string buffer, first_event;
    int status = 0;
    std::string content_type;
    httplib::Result result = client_->Get(
        "/v1/edits/" + id + "/events",
        [&](const httplib::Response& response) {
          status = response.status;
          content_type = response.get_header_value("Content-Type");
          return true;
        },
        [&](const char* data, size_t length) {
          buffer.append(data, length);
          const size_t end = buffer.find("\n\n");
          if (end == std::string::npos) return true;
          first_event = buffer.substr(0, end);
          return false;  // hang up
        });
    if (status == 0) return finish(transport_error("GET /v1/edits/" + id + "/events", result.error()));
    run_.count_status(status);
    if (status != 200) {  // the body went to the receiver: it is in buffer
      if (status < 500) violate("GET /v1/edits/" + id + "/events: HTTP " + std::to_string(status) + " " + excerpt(buffer));
      else acceptable_5xx(status, buffer, "GET /v1/edits/" + id + "/events");
      return;
    }
    if (content_type.rfind("text/event-stream", 0) != 0) violate("GET /v1/edits/" + id + "/events: Content-Type " + content_type);
    if (first_event.empty()) {
      if (!result && result.error() != httplib::Error::Canceled)
        return finish(transport_error("GET /v1/edits/" + id + "/events (before the first event)", result.error()));
      // The stream ended without a whole event (the server never ends it before the finished one).
      violate("GET /v1/edits/" + id + "/events: no complete first event (" + excerpt(buffer) + ")");
      return;
    }
    std::string event_name, data;
    std::istringstream lines(first_event);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("event: ", 0) == 0) event_name = line.substr(7);
      else if (line.rfind("data: ", 0) == 0) data = line.substr(6);
    }
    try {
      const json edit = json::parse(data);
      observe(id, edit, "first SSE event");
      const std::string expected = edit.value("finished", false) ? edit.value("outcome", "") : edit.value("status", "");
      if (event_name != expected) violate("SSE event name " + event_name + " for an edit reading " + expected);
    } catch (const std::exception&) {
      violate("GET /v1/edits/" + id + "/events: data is not JSON: " + excerpt(first_event));
    }
  }

  // Half an upload, then the connection closes (FIN, or RST half of the time). No edit may come of it.
  void upload_disconnect() {
    const std::string body = native_body(uniform_int(1, 3), 0);
    const bool reset = uniform_int(0, 1) == 1;
    const double pause = uniform(0.0, 0.05);
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
      violate("socket(): " + std::string(std::strerror(errno)));
      return finish("error");
    }
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(uint16_t(run_.args.port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      const int error = errno;
      ::close(fd);
      return finish(transport_error("connect for a half upload (" + std::string(std::strerror(error)) + ")", httplib::Error::Connection));
    }
    const std::string head = "POST /v1/edits HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(run_.args.port) +
                             "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n";
    const std::string half = head + body.substr(0, body.size() / 2);
    size_t sent = 0;
    while (sent < half.size()) {
      const ssize_t n = ::send(fd, half.data() + sent, half.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;  // the server may refuse early (503 too many connections) and close
      sent += size_t(n);
    }
    sleep_seconds(pause);
    if (reset) {
      linger option{1, 0};
      ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, sizeof option);
    }
    ::close(fd);
    finish("disconnected");
  }

  void openai(bool hang_up) {
    const int steps = uniform_int(1, 3);
    const httplib::MultipartFormDataItems form = {
        {"image", run_.image, run_.image_type == "png" ? "image.png" : "image.jpg", "image/" + run_.image_type},
        {"mask", run_.alpha_mask, "mask.png", "image/png"},
        {"prompt", "a red barn in an autumn field", "", ""},
        {"response_format", "b64_json", "", ""},
        {"steps", std::to_string(steps), "", ""},
        {"seed", std::to_string(uniform_int(0, 1000000)), "", ""},
        {"model", "flashps", "", ""},
    };
    if (hang_up) client_ = make_client(run_, 0.2);
    const auto answer = post_with_retries("POST /v1/images/edits", [&] { return client_->Post("/v1/images/edits", form); },
                                          /*transport_error_is_answer=*/hang_up);
    if (!answer) return;
    const httplib::Result& result = *answer;
    if (!result) {  // hang_up: the read timed out while the server edits (or a real transport error)
      if (result.error() == httplib::Error::Read) {
        {
          std::lock_guard<std::mutex> lock(run_.mutex);
          ++run_.openai_timed_out;
        }
        return finish("disconnected");
      }
      return finish(transport_error("POST /v1/images/edits", result.error()));
    }
    const httplib::Response& response = *result;
    if (response.status != 200) {
      unexpected(response, "POST /v1/images/edits", "200");
      return finish(response.status == 503 && run_.args.allow_draining ? "cancelled_by_drain" : "error");
    }
    try {
      const json parsed = json::parse(response.body);
      const std::string b64 = parsed.at("data").at(0).at("b64_json").get<std::string>();
      const auto png = base64_decode(b64);
      if (!png || !is_png(*png)) violate("POST /v1/images/edits: data[0].b64_json is not a base64 PNG");
      if (parsed.value("output_format", "") != "png") violate("POST /v1/images/edits: output_format " + parsed.value("output_format", ""));
    } catch (const std::exception& error) {
      violate("POST /v1/images/edits: 200 without data[0].b64_json (" + std::string(error.what()) + "): " + excerpt(response.body));
    }
    if (response.get_header_value("Server-Timing").empty()) violate("POST /v1/images/edits: no Server-Timing header");
    const std::string id = response.get_header_value("X-Flashps-Edit-Ids");
    if (id.size() != 21 || id.compare(0, 5, "edit_") != 0) {
      violate("POST /v1/images/edits: X-Flashps-Edit-Ids is '" + id + "'");
      return finish("error");
    }
    if (!track(id)) violate("POST /v1/images/edits: edit id " + id + " was given out before");
    // The edit behind a 200 must read done, now and later.
    httplib::Result status = client_->Get("/v1/edits/" + id);
    if (status && status->status == 200) {
      run_.count_status(200);
      try {
        const json edit = json::parse(status->body);
        observe(id, edit, "status after the OpenAI answer");
        if (!edit.value("finished", false) || edit.value("outcome", "") != "done")
          violate(id + ": the OpenAI request answered 200, the edit reads " + edit.value("status", "?"));
      } catch (const std::exception&) {
        violate("GET /v1/edits/" + id + ": not JSON");
      }
    } else if (status) {
      run_.count_status(status->status);
      unexpected(*status, "GET /v1/edits/" + id + " after the OpenAI answer", "200");
    } else if (!hang_up) {
      return finish(transport_error("GET /v1/edits/" + id, status.error()));
    }
    {
      std::lock_guard<std::mutex> lock(run_.mutex);
      Edit& seen = run_.edits[id];
      if (!seen.finished) seen = Edit{true, "done", seen.step, seen.observations};  // a 200 is an outcome too
    }
    finish(hang_up ? "answered_before_hang_up" : "done");
  }
};

void client_thread(Run& run) {
  for (;;) {
    if (run.server_gone) {
      // The server went away (allowed): the remaining requests end unsent.
      const int number = run.next++;
      if (number >= run.args.requests) return;
      run.end(number, "not_sent", Clock::now());
      continue;
    }
    const int number = run.next++;
    if (number >= run.args.requests) return;
    Request(run, number).go();
  }
}

// ---------------------------------------------------------------- metrics

std::map<std::string, double> read_metrics(const Run& run, bool* ok) {
  std::map<std::string, double> values;
  auto client = make_client(run, 30);
  httplib::Result result = client->Get("/metrics");
  *ok = result && result->status == 200;
  if (!*ok) return values;
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

double metric(const std::map<std::string, double>& values, const std::string& name) {
  const auto found = values.find(name);
  return found == values.end() ? 0 : found->second;
}

std::string outcome_metric(const std::string& outcome) { return "flashps_edits_total{outcome=\"" + outcome + "\"}"; }

// ---------------------------------------------------------------- the summary

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t index = std::min(values.size() - 1, size_t(std::ceil(p * double(values.size())) - 1));
  return values[index];
}

}  // namespace

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
        const int64_t untracked_done = done - tracked_done;  // edits of openai_disconnect requests
        std::ostringstream why;
        if (cancelled != tracked_cancelled) why << "cancelled " << cancelled << " != client's " << tracked_cancelled << "; ";
        if (deadline != tracked_deadline) why << "deadline_exceeded " << deadline << " != client's " << tracked_deadline << "; ";
        if (failed != tracked_failed) why << "failed " << failed << " != client's " << tracked_failed << "; ";
        if (unseen_rejected < 0 || unseen_rejected > run.openai_timed_out)
          why << "rejected " << rejected << " vs 429s seen " << run.seen_429 << "; ";
        if (untracked_done + unseen_rejected != run.openai_timed_out)
          why << "done " << done << " = client's " << tracked_done << " + " << untracked_done
              << " untracked, but " << run.openai_timed_out << " OpenAI requests hung up and " << unseen_rejected
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
                          {"untracked_done", untracked_done},
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

#endif  // !defined(CATCH_VERSION_MAJOR)
