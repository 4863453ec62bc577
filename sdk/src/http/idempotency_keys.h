// The Idempotency-Key header (IETF draft-ietf-httpapi-idempotency-key-header) on the edit routes:
// a request carrying a key that this client already used joins the edit(s) that key started,
// running or finished, instead of starting another; so a client's timeout-and-retry computes once.
//   - scope: per client, i.e. per API key (its hash; never the key itself), or per address on a
//     server without keys: one client's keys never match another's;
//   - the same key with a different request (another fingerprint of route and fields) is
//     refused with 422, as the draft says;
//   - a duplicate arriving while the first runs joins it (waits for the same result) instead of
//     the draft's 409, which the OpenAI clients would retry until they give up;
//   - edits that ended cancelled are not replayed: the key starts a new edit (a retry after a
//     disconnect must not get "cancelled");
//   - bounded: at most max_keys keys, each forgotten after max_age_seconds; entries hold the
//     jobs weakly, so a job forgotten by the job table (its retention) also frees its key.
#pragma once
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "http/edit_form.h"
#include "http/edit_jobs.h"
#include "http/wire/message.h"

namespace flashps::http {

// How long an edit started with a key outlives its client's disconnect, for the client's retry
// to join it: the official OpenAI clients retry within about 8 s (backoff 0.5 s doubling, 8 s at
// most). Past it, the edit is cancelled at its next step like any edit nobody waits for.
constexpr double kIdempotentRetryGraceSeconds = 10;

struct IdempotencyLimits {
  size_t max_keys = 1024;
  double max_age_seconds = 600;
};

// The request's Idempotency-Key: "" when absent. A structured-field string ("...") or a bare
// token; 1..255 printable ASCII characters, else HttpError(400) naming the header.
std::string idempotency_key_of(const Request& request);

// Whose keys these are: a hash of the Authorization header on a server with API keys (only
// accepted keys reach the routes), else the client's address.
std::string idempotency_scope_of(const Request& request, bool server_has_keys);

// What identifies "the same request": the route and every field of the form, images included.
uint64_t request_fingerprint(const std::string& route, const EditForm& form);

struct IdempotentEdits {
  std::vector<std::shared_ptr<EditJob>> jobs;
  bool replayed = false;  // joined the edits an earlier request with this key started
};

class IdempotencyKeys {
 public:
  explicit IdempotencyKeys(IdempotencyLimits limits) : limits_(limits) {}

  using Submit = std::function<std::vector<std::shared_ptr<EditJob>>()>;
  // The edits of (scope, key): those already started by a request with the same fingerprint, or
  // else what `submit` starts (called under the table's lock, so concurrent duplicates start
  // one). HttpError(422) when the key was used with another fingerprint; submit's errors pass
  // through and leave no entry.
  IdempotentEdits claim(const std::string& scope, const std::string& key, uint64_t fingerprint, const Submit& submit);
  size_t size() const;

 private:
  struct Entry {
    uint64_t fingerprint = 0;
    std::vector<std::weak_ptr<EditJob>> jobs;
    std::chrono::steady_clock::time_point created;
  };
  void forget_expired();  // under mutex_

  const IdempotencyLimits limits_;
  mutable std::mutex mutex_;
  std::map<std::string, Entry> entries_;  // scope + '\n' + key
  std::deque<std::pair<std::string, std::chrono::steady_clock::time_point>> order_;  // oldest first
};

}  // namespace flashps::http
