// The public serve::Engine facade and EditHandle (serve/engine.h): thin forwards to EngineCore
// (serve/engine_core.h), which holds the threads and request state behind them.
#include "serve/engine.h"

#include <chrono>

#include "serve/engine_core.h"

namespace flashps::serve {

const char* request_status_name(RequestStatus status) {
  switch (status) {
    case RequestStatus::queued: return "queued";
    case RequestStatus::preparing: return "preparing";
    case RequestStatus::ready: return "ready";
    case RequestStatus::running: return "running";
    case RequestStatus::finishing: return "finishing";
    case RequestStatus::done: return "done";
    case RequestStatus::failed: return "failed";
    case RequestStatus::cancelled: return "cancelled";
    case RequestStatus::rejected: return "rejected";
  }
  return "?";
}

RequestId EditHandle::id() const { return state_ ? state_->id : 0; }
RequestStatus EditHandle::status() const { return state_ ? state_->status.load() : RequestStatus::rejected; }
std::shared_future<EditResult> EditHandle::result() const {
  if (!state_) throw Error("empty edit handle");
  return state_->future;
}
bool EditHandle::wait_for(double seconds) const {
  return result().wait_for(std::chrono::duration<double>(seconds)) == std::future_status::ready;
}
void EditHandle::cancel() {
  if (!state_) return;
  if (auto core = core_.lock()) core->cancel(state_);
  else state_->cancel_requested = true;
}
double EditHandle::queueing_seconds() const { return state_ ? state_->queueing.load() : -1; }
double EditHandle::latency_seconds() const { return state_ ? state_->latency.load() : -1; }
int EditHandle::worker() const { return state_ ? state_->worker : -1; }

Engine::Engine(std::vector<EngineDevice> devices, EngineOptions options)
    : core_(std::make_shared<EngineCore>(std::move(devices), std::move(options))) {}
Engine::~Engine() { core_->stop(); }
EditHandle Engine::submit(EditRequest request, SubmitOptions options) {
  return core_->submit(std::move(request), std::move(options), core_);
}
void Engine::wait_idle() { core_->wait_idle(); }
void Engine::pause() { core_->set_paused(true); }
void Engine::resume() { core_->set_paused(false); }
EngineCounters Engine::counters() const { return core_->counters(); }
std::vector<StepRecord> Engine::step_log() const { return core_->step_log(); }
const EngineOptions& Engine::options() const { return core_->options(); }

}  // namespace flashps::serve
