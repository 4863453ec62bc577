#include "serve/batching.h"

#include <algorithm>

#include "core/diagnostics/error.h"

namespace flashps::serve {
namespace {

template <typename Container>
void erase_value(Container& container, RequestId id) {
  container.erase(std::remove(container.begin(), container.end(), id), container.end());
}

}  // namespace

BatchingConfig batching_config(const std::string& name, int max_batch) {
  if (max_batch < 0) throw Error("maximum batch size must be at least 1 (or 0: per device)");
  BatchingConfig config;
  config.max_batch = max_batch;
  if (name == "static-full") {
    config.mode = BatchingMode::static_batching;
    config.disaggregated = false;
    config.mask_aware = false;
  } else if (name == "static") {
    config.mode = BatchingMode::static_batching;
  } else if (name == "naive-cb") {
    config.disaggregated = false;
  } else if (name != "cb") {
    throw Error("unknown batching \"" + name + "\" (static-full, static, naive-cb, cb)");
  }
  return config;
}

std::string batching_name(const BatchingConfig& config) {
  if (config.mode == BatchingMode::static_batching) {
    if (!config.mask_aware) return config.disaggregated ? "static-full-disaggregated" : "static-full";
    return config.disaggregated ? "static" : "static-inline";
  }
  std::string name = config.disaggregated ? "cb" : "naive-cb";
  return config.mask_aware ? name : name + "-full";
}

WorkerBatcher::WorkerBatcher(BatchingConfig config) : config_(config) {
  if (config_.max_batch < 1) throw Error("maximum batch size must be at least 1");
}

void WorkerBatcher::assign(RequestId id, const RequestWork& estimate) {
  if (entries_.count(id)) throw Error("request " + std::to_string(id) + " assigned twice");
  entries_[id] = Entry{estimate, 0, State::waiting};
  arrival_order_.push_back(id);
}

void WorkerBatcher::mark_prepared(RequestId id, const RequestWork& exact) {
  auto found = entries_.find(id);
  if (found == entries_.end()) return;  // removed while it was being prepared
  found->second.work = exact;
  if (exact.steps == 0 && !config_.disaggregated) {
    // Nothing to denoise (an empty mask): straight to inline post-processing, never into a batch.
    found->second.state = State::denoised;
    erase_value(arrival_order_, id);
    to_finish_.push_back(id);
    return;
  }
  found->second.state = State::ready;
}

bool WorkerBatcher::admit_ready() {
  if (config_.mode == BatchingMode::static_batching && !running_.empty()) return false;
  bool admitted = false;
  for (auto it = arrival_order_.begin(); it != arrival_order_.end() && running_.size() < size_t(config_.max_batch);) {
    Entry& entry = entries_.at(*it);
    if (entry.state != State::ready) {
      ++it;
      continue;
    }
    entry.state = State::running;
    running_.push_back(*it);
    it = arrival_order_.erase(it);
    admitted = true;
  }
  return admitted;
}

WorkerAction WorkerBatcher::next_action() {
  if (!config_.disaggregated) {
    if (!to_finish_.empty()) return {WorkerAction::finish, {to_finish_.front()}};
    if (config_.mode == BatchingMode::static_batching) {
      if (running_.empty()) {
        if (forming_.empty())
          for (RequestId id : arrival_order_) {
            if (forming_.size() == size_t(config_.max_batch)) break;
            forming_.push_back(id);
          }
        for (RequestId id : forming_) {
          Entry& entry = entries_.at(id);
          if (entry.state == State::waiting) {
            entry.state = State::preparing;
            return {WorkerAction::prepare, {id}};
          }
        }
        for (RequestId id : forming_) {
          entries_.at(id).state = State::running;
          running_.push_back(id);
          erase_value(arrival_order_, id);
        }
        forming_.clear();
      }
    } else {
      size_t occupied = running_.size();
      for (RequestId id : arrival_order_) occupied += entries_.at(id).state != State::waiting;
      if (occupied < size_t(config_.max_batch))
        for (RequestId id : arrival_order_) {
          Entry& entry = entries_.at(id);
          if (entry.state == State::waiting) {
            entry.state = State::preparing;
            return {WorkerAction::prepare, {id}};
          }
        }
      admit_ready();
    }
  } else {
    admit_ready();
  }
  if (!running_.empty()) return {WorkerAction::step, running_};
  return {};
}

std::vector<RequestId> WorkerBatcher::step_done(const std::vector<RequestId>& batch) {
  std::vector<RequestId> finished;
  for (RequestId id : batch) {
    auto found = entries_.find(id);
    if (found == entries_.end() || found->second.state != State::running) continue;
    Entry& entry = found->second;
    if (++entry.steps_done < entry.work.steps) continue;
    erase_value(running_, id);
    finished.push_back(id);
    if (config_.disaggregated) {
      entries_.erase(found);
    } else {
      entry.state = State::denoised;
      to_finish_.push_back(id);
    }
  }
  return finished;
}

void WorkerBatcher::mark_finished(RequestId id) {
  erase_value(to_finish_, id);
  entries_.erase(id);
}

bool WorkerBatcher::remove(RequestId id) {
  if (!entries_.erase(id)) return false;
  erase_value(arrival_order_, id);
  erase_value(running_, id);
  erase_value(forming_, id);
  erase_value(to_finish_, id);
  return true;
}

int64_t WorkerBatcher::computed_token_count() const {
  int64_t tokens = 0;
  for (const auto& [id, entry] : entries_)
    if (entry.state != State::denoised) tokens += entry.work.computed_tokens();
  return tokens;
}

std::vector<RequestWork> WorkerBatcher::outstanding() const {
  std::vector<RequestWork> works;
  works.reserve(entries_.size());
  for (RequestId id : running_) {
    const Entry& entry = entries_.at(id);
    RequestWork work = entry.work;
    work.steps = std::max(0, work.steps - entry.steps_done);
    works.push_back(work);
  }
  for (RequestId id : arrival_order_) works.push_back(entries_.at(id).work);
  return works;
}

}  // namespace flashps::serve
