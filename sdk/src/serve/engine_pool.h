// The pre-/post-processing pool's queue and threads (disaggregated batching): start_edit,
// finish_edit and preview decoding off the step loop. Internal to serve/engine; include only
// from sdk/src/serve/. Its threads run EngineCore::pool_loop (serve/engine_pool.cpp).
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "serve/engine.h"

namespace flashps::serve {

// Everything here is guarded by the engine's mutex: the pool's tasks move requests between
// phases, which the engine's other threads read under that mutex.
struct PrePostPool {
  struct Task {
    std::shared_ptr<RequestState> state;
    bool finish;  // else prepare
    std::function<Image()> preview;  // set: decode a preview instead
    ServeEvent event;
  };

  // Under the mutex.
  void push(Task task) {
    queue.push_back(std::move(task));
    wake.notify_one();
  }

  // Under the mutex: the first task a pool thread may take. A request's post-processing waits
  // for its previews, so with several pool threads its events still arrive in order.
  std::deque<Task>::iterator next_task();

  std::deque<Task> queue;
  std::condition_variable wake;
  std::vector<std::thread> threads;
  bool stopping = false;
};

}  // namespace flashps::serve
