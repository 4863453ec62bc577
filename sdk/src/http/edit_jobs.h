// The server's edits: each HTTP edit becomes an EditJob, submitted to the engine through the public
// API. Engine events update the job (status, step/steps) and wake its waiters (blocking OpenAI
// requests, status polls, Server-Sent Event streams). A resolved request goes to a finisher thread
// that encodes the result once, records the metrics, and only then shows the job as finished, so
// "done" always comes with its image. Finished jobs are kept for a while for status and result
// requests (bounded in count and age), then forgotten.
#pragma once
#include <flashps/flashps.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "http/edit_form.h"
#include "http/server_metrics.h"

namespace flashps::http {

// A consistent copy of a job's state, for one answer.
struct JobView {
  std::string id;
  flashps_request_status status = FLASHPS_REQUEST_QUEUED;
  int step = 0, steps = 0, worker = -1;
  double seconds = 0;        // since submission (engine clock)
  bool finished = false;     // resolved and its result encoded (status is terminal)
  flashps_status outcome = FLASHPS_OK;  // finished: OK, CANCELLED, DEADLINE_EXCEEDED or the error
  int http_status = 200;     // the answer a finished job's result gets: 200, or its error's
  std::string error;         // failures, cancels, deadlines
  std::string output_format; // "png" or "jpeg"
  sdk::EditStats stats;      // finished and done
  double encode_seconds = 0;
  double finish_seconds = 0; // from the engine's terminal event to finished, less encoding
  uint64_t version = 0;      // grows with every change (Server-Sent Events resume from it)
  uint64_t sequence = 0;     // submission order
  int partial_images = 0;    // encoded step previews so far (EditJob::partial_images)
};

class EditJob {
 public:
  explicit EditJob(std::string id, std::string output_format) : id_(std::move(id)), output_format_(std::move(output_format)) {}
  const std::string& id() const { return id_; }
  JobView view() const;
  // Waits until the job's version passes `seen_version` (or it finished), up to timeout_seconds.
  JobView wait_change(uint64_t seen_version, double timeout_seconds) const;
  // Waits until finished (timeout < 0: for ever); true when it is.
  bool wait_finished(double timeout_seconds) const;
  // The encoded result of a done job; empty otherwise.
  std::shared_ptr<const std::string> result() const;
  // Step previews (the processed region), encoded in the output format, in step order: at most
  // the count submit() was asked for (OpenAI's partial_images).
  std::vector<std::shared_ptr<const std::string>> partial_images() const;
  void cancel() const;
  // Clients waiting for this job's answer (an Idempotency-Key lets several share one edit).
  // release_waiter() is called when one goes away. When it was the last and the job still runs,
  // nobody reads its answer: with grace_seconds 0 it returns true (cancel it now); else the job
  // waits that long for a retry to join (add_waiter) and cancels itself at its first step after
  // (counted in `metrics`), so a client's timeout-and-retry with a key joins its edit.
  void add_waiter() const;
  bool release_waiter(double grace_seconds = 0) const;

 private:
  friend class EditJobs;
  void on_event(const sdk::Event& event, ServerMetrics& metrics);
  void attach(sdk::Request request);

  const std::string id_;
  const std::string output_format_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  JobView state_;
  sdk::Request request_;
  bool terminal_event_ = false, queued_for_finish_ = false;
  double last_step_seconds_ = -1;
  std::chrono::steady_clock::time_point terminal_at_;
  int last_step_ = 0;
  std::shared_ptr<const std::string> result_;
  mutable int waiters_ = 0;
  mutable bool orphaned_ = false, cancelled_orphan_ = false;
  mutable std::chrono::steady_clock::time_point orphaned_until_;
  int partial_images_wanted_ = 0;  // set before submission, then read only
  std::vector<std::shared_ptr<const std::string>> partial_images_;
  std::chrono::steady_clock::time_point finished_at_;
  std::function<void()> on_ready_to_finish_;  // set by EditJobs: queues the job for its finisher
};

struct JobRetention {
  int keep_results = 256;
  double keep_seconds = 600;
};

class EditJobs {
 public:
  EditJobs(sdk::Engine engine, ServerMetrics& metrics, JobRetention retention, int finisher_threads = 2);
  ~EditJobs();  // cancels what is outstanding, waits for it, joins the finishers
  EditJobs(const EditJobs&) = delete;
  EditJobs& operator=(const EditJobs&) = delete;

  // Submits one edit. Throws HttpError: 429 when the engine's queue is full, 400/422 when the
  // engine refuses the input, 503 when it is closing. With partial_images > 0 the engine makes
  // step previews every `preview_every_steps`, and the job keeps the first partial_images.
  std::shared_ptr<EditJob> submit(const EditImages& images, const sdk::EditOptions& options, double deadline_seconds,
                                  const std::string& output_format, int partial_images = 0,
                                  int preview_every_steps = 0);
  std::shared_ptr<EditJob> find(const std::string& id);
  std::vector<JobView> list(size_t at_most);
  int unfinished() const;
  // Cancels every unfinished job; returns how many.
  int cancel_all();
  // Until every job has finished, up to timeout_seconds; true when they have.
  bool wait_all_finished(double timeout_seconds);

 private:
  std::string new_id();
  void finish(const std::shared_ptr<EditJob>& job);
  void finisher_loop();
  void forget_old_jobs();  // under jobs_mutex_

  sdk::Engine engine_;
  ServerMetrics& metrics_;
  JobRetention retention_;
  mutable std::mutex jobs_mutex_;
  std::condition_variable all_finished_;
  std::map<std::string, std::shared_ptr<EditJob>> jobs_;
  std::deque<std::string> finished_order_;
  int unfinished_ = 0;
  uint64_t id_state_;
  uint64_t submitted_ = 0;

  std::mutex finish_mutex_;
  std::condition_variable finish_ready_;
  std::deque<std::shared_ptr<EditJob>> to_finish_;
  bool stopping_ = false;
  std::vector<std::thread> finishers_;
};

}  // namespace flashps::http
