#include "load_request.h"

#include "load_media.h"

namespace load_client {
namespace {

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

}  // namespace

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


}  // namespace load_client
