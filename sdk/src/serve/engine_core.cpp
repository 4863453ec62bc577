// EngineCore's lifecycle: building its workers, starting and stopping all of its threads (workers,
// pool, event dispatcher) in the order shutdown needs, and waiting for it to go idle.
#include "serve/engine_core.h"

#include <algorithm>

#include "core/diagnostics/log.h"
#include "serve/batch_size.h"

namespace flashps::serve {

EngineCore::EngineCore(std::vector<EngineDevice> devices, EngineOptions options) : options_(std::move(options)) {
  if (devices.empty()) throw Error("engine needs at least one device");
  std::vector<const DeviceProfile*> profiles;
  for (EngineDevice& device : devices) {
    if (!device.pipeline) throw Error("engine device \"" + device.name + "\" has no pipeline");
    if (device.profile.blocks.empty()) throw Error("engine device \"" + device.name + "\" has no latency profile");
    BatchingConfig batching = options_.batching;
    if (batching.max_batch == 0) {
      const BatchSizeChoice choice = choose_max_batch(device.profile);
      batching.max_batch = choice.max_batch;
      log::info("worker " + device.name + ": max batch " + std::to_string(choice.max_batch) + " (" + choice.reason + ")");
    }
    workers_.push_back(std::make_unique<Worker>(std::move(device), batching));
  }
  for (const auto& worker : workers_) profiles.push_back(&worker->device.profile);
  balancer_ = std::make_unique<LoadBalancer>(options_.policy, profiles, workers_.front()->batcher.config().max_batch);
  events_.start();
  for (size_t i = 0; i < workers_.size(); ++i) workers_[i]->thread = std::thread([this, i] { worker_loop(i); });
  if (options_.batching.disaggregated)
    for (int i = 0; i < std::max(1, options_.pool_threads); ++i) pool_.threads.emplace_back([this] { pool_loop(); });
}

void EngineCore::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    for (auto& [id, state] : live_) state->cancel_requested = true;
    for (auto& worker : workers_) wake(*worker);
    pool_.wake.notify_all();
  }
  for (auto& worker : workers_)
    if (worker->thread.joinable()) worker->thread.join();
  // Only now may the pool stop: a worker's last step can still hand it requests to finish.
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pool_.stopping = true;
    pool_.wake.notify_all();
  }
  for (std::thread& thread : pool_.threads) thread.join();
  events_.stop();
}

void EngineCore::wait_idle() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [&] { return live_.empty(); });
  }
  events_.wait_drained();
}

}  // namespace flashps::serve
