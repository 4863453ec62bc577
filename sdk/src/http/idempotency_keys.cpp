#include "http/idempotency_keys.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "http/http_error.h"

namespace flashps::http {
namespace {

using Clock = std::chrono::steady_clock;

// FNV-1a, 64 bits: stable, and each field is length-prefixed so ("ab", "c") and ("a", "bc") differ.
class Fingerprint {
 public:
  Fingerprint& add(const void* data, size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < size; ++i) hash_ = (hash_ ^ bytes[i]) * 0x100000001b3ull;
    return *this;
  }
  Fingerprint& add(const std::string& text) {
    const uint64_t size = text.size();
    return add(&size, sizeof size).add(text.data(), text.size());
  }
  template <typename T>
  Fingerprint& add(const std::optional<T>& value) {
    const char present = value.has_value();
    add(&present, 1);
    if (value) add(&*value, sizeof(T));
    return *this;
  }
  Fingerprint& add_number(double value) { return add(&value, sizeof value); }
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 0xcbf29ce484222325ull;
};

std::string hex(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

std::string idempotency_key_of(const Request& request) {
  if (!request.has_header("Idempotency-Key")) return "";
  std::string key = request.get_header_value("Idempotency-Key");
  if (key.size() >= 2 && key.front() == '"' && key.back() == '"') key = key.substr(1, key.size() - 2);
  bool printable = !key.empty() && key.size() <= 255;
  for (const char c : key) printable &= c >= 0x20 && c <= 0x7e;
  if (!printable)
    throw HttpError(400, "the Idempotency-Key header must hold 1 to 255 printable ASCII characters (e.g. a UUID)",
                    "Idempotency-Key", "invalid_idempotency_key");
  return key;
}

std::string idempotency_scope_of(const Request& request, bool server_has_keys) {
  if (server_has_keys) return "key " + hex(Fingerprint().add(request.get_header_value("Authorization")).value());
  return "address " + request.remote_addr;
}

uint64_t request_fingerprint(const std::string& route, const EditForm& form) {
  Fingerprint print;
  print.add(route).add(form.image).add(form.mask).add(form.prompt).add(form.negative_prompt).add(form.model);
  print.add(form.size).add(form.response_format).add(form.output_format).add(form.cache);
  print.add_number(form.n).add(form.seed).add(form.steps).add(form.mask_grow_pixels).add(form.mask_feather_pixels);
  print.add(form.context_size).add(form.max_sequence_length).add(form.strength).add(form.guidance_scale);
  print.add_number(form.deadline_seconds).add_number(form.stream).add_number(form.partial_images);
  return print.value();
}

IdempotentEdits IdempotencyKeys::claim(const std::string& scope, const std::string& key, uint64_t fingerprint,
                                       const Submit& submit) {
  const std::string name = scope + '\n' + key;
  std::lock_guard<std::mutex> lock(mutex_);
  forget_expired();
  const auto found = entries_.find(name);
  if (found != entries_.end()) {
    IdempotentEdits earlier{{}, true};
    bool replayable = true;
    for (const auto& weak : found->second.jobs) {
      auto job = weak.lock();
      // Forgotten by the job table, or cancelled (by its client's disconnect, a DELETE): start anew.
      replayable &= job && !(job->view().finished && job->view().outcome == FLASHPS_CANCELLED);
      if (job) earlier.jobs.push_back(std::move(job));
    }
    if (replayable) {
      if (found->second.fingerprint != fingerprint)
        throw HttpError(422,
                        "this Idempotency-Key was used for a different request (other fields or images): use a new "
                        "key for a new request",
                        "Idempotency-Key", "idempotency_key_reused");
      return earlier;
    }
    entries_.erase(found);  // its place in order_ is skipped when it comes up
  }
  Entry entry;
  entry.fingerprint = fingerprint;
  entry.created = Clock::now();
  IdempotentEdits started{submit(), false};
  for (const auto& job : started.jobs) entry.jobs.push_back(job);
  entries_[name] = std::move(entry);
  order_.emplace_back(name, entries_[name].created);
  forget_expired();  // the count bound, with the new key counted
  return started;
}

void IdempotencyKeys::forget_expired() {
  if (order_.size() > 2 * limits_.max_keys + 16) {
    // Replaced keys leave stale places behind a young one; rebuild the order from the entries.
    order_.clear();
    for (const auto& [name, entry] : entries_) order_.emplace_back(name, entry.created);
    std::sort(order_.begin(), order_.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  }
  const auto now = Clock::now();
  while (!order_.empty()) {
    const auto& [name, created] = order_.front();
    const auto found = entries_.find(name);
    if (found == entries_.end() || found->second.created != created) {  // erased, or replaced later
      order_.pop_front();
      continue;
    }
    const bool too_old = std::chrono::duration<double>(now - created).count() > limits_.max_age_seconds;
    if (!too_old && entries_.size() <= limits_.max_keys) break;
    entries_.erase(found);
    order_.pop_front();
  }
}

size_t IdempotencyKeys::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

}  // namespace flashps::http
