// The serving engine: submit edits from any thread, get a handle with a result future, progress
// events and cancel(). One worker thread per device runs step-level continuous batching
// (serve/batching.h); a pool of threads does pre-/post-processing beside it (disaggregation);
// a load balancer routes each request to a worker on arrival (serve/load_balancer.h).
//
//   serve::Engine engine({serve::engine_device(pipeline)}, serve::EngineOptions{});
//   serve::EditHandle handle = engine.submit(request);
//   EditResult result = handle.wait();   // throws Cancelled, RequestRejected, DeadlineExceeded, Error
//
// Every submitted request resolves exactly once: done, failed, cancelled or rejected.
#pragma once
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "core/diagnostics/error.h"
#include "pipeline/edit_job.h"
#include "serve/batching.h"
#include "serve/device_profile.h"
#include "serve/load_balancer.h"

namespace flashps::serve {

// queued -> preparing -> ready (waiting for a batch slot) -> running -> finishing -> done, or
// failed / cancelled at any point before done; rejected at submission. Every state is an event;
// running comes once per denoising step (step/steps), plus once per preview.
enum class RequestStatus { queued, preparing, ready, running, finishing, done, failed, cancelled, rejected };
const char* request_status_name(RequestStatus status);

// The queue is full or the engine is shutting down.
class RequestRejected : public Error {
 public:
  using Error::Error;
};

class DeadlineExceeded : public Error {
 public:
  using Error::Error;
};

struct ServeEvent {
  RequestId id = 0;
  RequestStatus status = RequestStatus::queued;
  int step = 0, steps = 0;     // denoising progress
  double seconds = 0;          // since submission
  int worker = -1;
  std::string message;         // failures: the error
  std::shared_ptr<const Image> preview;  // with SubmitOptions::preview_every_steps
};
// Called on the engine's event thread, in the order each request's state changed, outside the
// engine's locks; keep it short. Engine::wait_idle() returns after every event was delivered.
using ServeEventCallback = std::function<void(const ServeEvent&)>;

struct SubmitOptions {
  double deadline_seconds = 0;  // after submission; 0 = none. Expired requests fail.
  ServeEventCallback on_event;
  // Every N denoising steps, a "running" event carries a preview of the processed region (the
  // current latents, decoded by the pre-/post-processing pool); 0 = none.
  int preview_every_steps = 0;
};

struct EngineDevice {
  std::string name;
  std::shared_ptr<StepwisePipeline> pipeline;
  DeviceProfile profile;  // the device's latency models, for mask-aware routing
};

struct EngineOptions {
  BatchingConfig batching;
  BalancePolicy policy = BalancePolicy::mask_aware;
  size_t max_queued = 64;  // requests waiting to start denoising; more are rejected
  int pool_threads = 1;    // pre-/post-processing threads (disaggregated batching)
  // Nice value added to the worker and pool threads (and the OpenMP and loader threads they
  // start): a server's connection threads then get a core first (flashps serve uses 10).
  int compute_nice = 0;
  // Keep a record of every batched step (Engine::step_log): what ran and how long it took, for
  // checking a simulator's step times against real ones. Off by default: it grows per step.
  bool record_steps = false;
};

// `request` as an engine with `batching` runs it: in full when the batching is not mask-aware
// (which prepares the mask's processing window, where a replay may take the whole image its
// template was captured at). What a simulation of that engine should step.
EditRequest request_as_run(EditRequest request, const BatchingConfig& batching);

// One batched denoising step as a worker ran it.
struct StepRecord {
  size_t worker = 0;
  std::vector<RequestWork> batch;  // each request's work, as prepared
  double seconds = 0;              // the pipeline's step, wall time
  int others_stepping = 0;         // other workers mid-step as it started
};

struct EngineCounters {
  int64_t submitted = 0, done = 0, failed = 0, cancelled = 0, rejected = 0;
  int64_t steps = 0;                 // batched steps run, all workers
  int64_t decisions = 0;
  double decision_seconds = 0;       // choosing workers, all decisions
  double assembly_seconds = 0;       // forming batches and their inputs, all steps (wall time)
  double max_assembly_seconds = 0;
  double assembly_cpu_seconds = 0;   // the same in the worker thread's CPU time (no preemption)
  int64_t prepared = 0, finished = 0;            // pre-/post-processing runs (start_edit, finish_edit)
  double prepare_seconds = 0, finish_seconds = 0;  // their wall time, all requests
};

struct RequestState;
class EngineCore;

class EditHandle {
 public:
  EditHandle() = default;
  RequestId id() const;
  RequestStatus status() const;
  std::shared_future<EditResult> result() const;
  EditResult wait() const { return result().get(); }
  bool wait_for(double seconds) const;  // true once resolved
  void cancel();                        // no effect once resolved
  // Seconds from submission to the first denoising step / to resolution (negative: not yet).
  double queueing_seconds() const;
  double latency_seconds() const;
  int worker() const;

 private:
  friend class EngineCore;
  std::shared_ptr<RequestState> state_;
  std::weak_ptr<EngineCore> core_;
};

class Engine {
 public:
  Engine(std::vector<EngineDevice> devices, EngineOptions options);
  ~Engine();  // cancels what is outstanding and joins its threads
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  EditHandle submit(EditRequest request, SubmitOptions options = {});
  void wait_idle();  // until every submitted request has resolved
  // Paused workers start no new step or inline pre-/post-processing (the pool still prepares):
  // queue work up, then let it run. pause() returns once work a worker had started (a step,
  // inline pre-/post-processing) has finished, so until resume() the caller may step a device's
  // pipeline itself (register a template), as only start_edit/finish_edit run meanwhile. Not
  // nested: one resume() undoes any number of pause() calls.
  void pause();
  void resume();
  EngineCounters counters() const;
  std::vector<StepRecord> step_log() const;  // empty unless EngineOptions::record_steps
  const EngineOptions& options() const;

 private:
  std::shared_ptr<EngineCore> core_;
};

}  // namespace flashps::serve
