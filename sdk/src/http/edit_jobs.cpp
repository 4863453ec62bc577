#include "http/edit_jobs.h"

#include <algorithm>
#include <chrono>
#include <random>

#include "http/http_error.h"

namespace flashps::http {
namespace {

using Clock = std::chrono::steady_clock;

enum class Phase { queued, running, other };

Phase phase_of(flashps_request_status status) {
  switch (status) {
    case FLASHPS_REQUEST_QUEUED:
    case FLASHPS_REQUEST_PREPARING:
    case FLASHPS_REQUEST_READY: return Phase::queued;
    case FLASHPS_REQUEST_RUNNING: return Phase::running;
    default: return Phase::other;
  }
}

std::atomic<int>* gauge_of(Phase phase, ServerMetrics& metrics) {
  if (phase == Phase::queued) return &metrics.queued;
  if (phase == Phase::running) return &metrics.running;
  return nullptr;
}

bool is_terminal(flashps_request_status status) {
  return status == FLASHPS_REQUEST_DONE || status == FLASHPS_REQUEST_FAILED || status == FLASHPS_REQUEST_CANCELLED ||
         status == FLASHPS_REQUEST_REJECTED;
}

std::chrono::nanoseconds duration_of(double seconds) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(seconds));
}

}  // namespace

// ---------------------------------------------------------------- EditJob

JobView EditJob::view() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return state_;
}

JobView EditJob::wait_change(uint64_t seen_version, double timeout_seconds) const {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait_for(lock, duration_of(timeout_seconds),
                    [&] { return state_.version > seen_version || state_.finished; });
  return state_;
}

bool EditJob::wait_finished(double timeout_seconds) const {
  std::unique_lock<std::mutex> lock(mutex_);
  if (timeout_seconds < 0) {
    changed_.wait(lock, [&] { return state_.finished; });
    return true;
  }
  return changed_.wait_for(lock, duration_of(timeout_seconds), [&] { return state_.finished; });
}

std::shared_ptr<const std::string> EditJob::result() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return result_;
}

std::vector<std::shared_ptr<const std::string>> EditJob::partial_images() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return partial_images_;
}

void EditJob::add_waiter() const {
  std::lock_guard<std::mutex> lock(mutex_);
  ++waiters_;
  orphaned_ = false;
}

bool EditJob::release_waiter(double grace_seconds) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (--waiters_ > 0 || state_.finished) return false;
  if (grace_seconds <= 0) return true;
  orphaned_ = true;
  orphaned_until_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(grace_seconds));
  return false;
}

void EditJob::cancel() const {
  sdk::Request request;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    request = request_;
  }
  if (request) request.cancel();  // no effect once resolved
}

void EditJob::on_event(const sdk::Event& event, ServerMetrics& metrics) {
  std::function<void()> ready;
  bool cancel_orphan = false;
  std::shared_ptr<const std::string> partial;
  if (event.preview && partial_images_wanted_ > 0) {
    bool wanted = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      wanted = static_cast<int>(partial_images_.size()) < partial_images_wanted_;
    }
    void* bytes = nullptr;
    size_t size = 0;
    // Encoded here: the preview is valid during the callback only. A failure only loses a preview.
    if (wanted && flashps_image_encode(event.preview, output_format_.c_str(), &bytes, &size) == FLASHPS_OK)
      partial = std::make_shared<const std::string>(static_cast<const char*>(bytes), size);
    flashps_buffer_free(bytes);
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const Phase before = phase_of(state_.status), after = phase_of(event.status);
    if (before != after) {
      if (auto* gauge = gauge_of(before, metrics)) --*gauge;
      if (auto* gauge = gauge_of(after, metrics)) ++*gauge;
    }
    if (event.status == FLASHPS_REQUEST_RUNNING) {
      // Per-step latency as this edit saw it: the batch's step time, whatever ran beside it.
      if (last_step_seconds_ >= 0 && event.step > last_step_)
        metrics.observe_step((event.seconds - last_step_seconds_) / (event.step - last_step_));
      if (last_step_seconds_ < 0 || event.step > last_step_) {
        last_step_seconds_ = event.seconds;
        last_step_ = event.step;
      }
    }
    // A resolved request shows as finishing until its result is encoded: "done" comes with its image.
    state_.status = is_terminal(event.status) ? FLASHPS_REQUEST_FINISHING : event.status;
    state_.step = event.step;
    state_.steps = event.steps;
    state_.seconds = event.seconds;
    state_.worker = event.worker;
    if (!event.message.empty()) state_.error = event.message;
    if (partial && static_cast<int>(partial_images_.size()) < partial_images_wanted_) {
      partial_images_.push_back(std::move(partial));
      state_.partial_images = static_cast<int>(partial_images_.size());
    }
    ++state_.version;
    if (orphaned_ && waiters_ <= 0 && !cancelled_orphan_ && !is_terminal(event.status) &&
        Clock::now() >= orphaned_until_) {
      cancelled_orphan_ = true;  // no retry joined within the grace: nobody reads the answer
      cancel_orphan = true;
    }
    if (is_terminal(event.status)) {
      terminal_event_ = true;
      terminal_at_ = Clock::now();
      if (request_ && !queued_for_finish_) {
        queued_for_finish_ = true;
        ready = on_ready_to_finish_;
      }
    }
  }
  changed_.notify_all();
  if (cancel_orphan) {
    cancel();
    ++metrics.cancelled_client_gone;
  }
  if (ready) ready();
}

void EditJob::attach(sdk::Request request) {
  std::function<void()> ready;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    request_ = std::move(request);
    if (terminal_event_ && !queued_for_finish_) {  // it resolved before submit() returned
      queued_for_finish_ = true;
      ready = on_ready_to_finish_;
    }
  }
  if (ready) ready();
}

// ---------------------------------------------------------------- EditJobs

EditJobs::EditJobs(sdk::Engine engine, ServerMetrics& metrics, JobRetention retention, int finisher_threads)
    : engine_(std::move(engine)), metrics_(metrics), retention_(retention) {
  std::random_device device;
  id_state_ = (uint64_t{device()} << 32) ^ device();
  for (int i = 0; i < finisher_threads; ++i) finishers_.emplace_back([this] { finisher_loop(); });
}

EditJobs::~EditJobs() {
  cancel_all();
  // Without a timeout: the engine's event callbacks point into this object until every job's
  // terminal event has come, and a cancel lands at the next step boundary.
  {
    std::unique_lock<std::mutex> lock(jobs_mutex_);
    all_finished_.wait(lock, [&] { return unfinished_ == 0; });
  }
  {
    std::lock_guard<std::mutex> lock(finish_mutex_);
    stopping_ = true;
  }
  finish_ready_.notify_all();
  for (std::thread& thread : finishers_) thread.join();
}

std::string EditJobs::new_id() {
  // splitmix64 of a random start: unguessable enough to not enumerate others' edits, and unique.
  uint64_t z = (id_state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  char text[32];
  std::snprintf(text, sizeof text, "edit_%016llx", static_cast<unsigned long long>(z));
  return text;
}

std::shared_ptr<EditJob> EditJobs::submit(const EditImages& images, const sdk::EditOptions& options,
                                          double deadline_seconds, const std::string& output_format,
                                          int partial_images, int preview_every_steps) {
  std::shared_ptr<EditJob> job;
  {
    std::lock_guard<std::mutex> lock(jobs_mutex_);
    forget_old_jobs();
    job = std::make_shared<EditJob>(new_id(), output_format.empty() ? "png" : output_format);
    job->state_.sequence = ++submitted_;
  }
  job->state_.id = job->id();
  job->state_.output_format = job->output_format_;
  job->partial_images_wanted_ = partial_images;
  job->on_ready_to_finish_ = [this, weak = std::weak_ptr<EditJob>(job)] {
    if (auto ready = weak.lock()) {
      // Notified under the lock: this runs on the engine's event thread, and once the lock is
      // released a finisher may finish the last job, letting ~EditJobs destroy finish_ready_.
      std::lock_guard<std::mutex> lock(finish_mutex_);
      to_finish_.push_back(std::move(ready));
      finish_ready_.notify_one();
    }
  };
  ++metrics_.queued;  // QUEUED until its first event says otherwise
  {
    std::lock_guard<std::mutex> lock(jobs_mutex_);
    jobs_[job->id()] = job;
    ++unfinished_;
  }
  sdk::SubmitOptions submit;
  submit.deadline_seconds = deadline_seconds;
  if (partial_images > 0) submit.preview_every_steps = std::max(1, preview_every_steps);
  submit.on_event = [job, &metrics = metrics_](const sdk::Event& event) { job->on_event(event, metrics); };
  try {
    job->attach(engine_.submit(images.image, images.mask, options, submit));
  } catch (const sdk::Error& error) {
    --metrics_.queued;
    {
      std::lock_guard<std::mutex> lock(jobs_mutex_);
      jobs_.erase(job->id());
      --unfinished_;
    }
    all_finished_.notify_all();
    if (error.status() == FLASHPS_REJECTED) {
      metrics_.count_outcome("rejected");
      throw HttpError(429, std::string("the edit queue is full: ") + error.what() + "; retry later", "",
                      "queue_full");
    }
    throw HttpError(http_status_of(error.status()), error.what());
  }
  return job;
}

void EditJobs::finisher_loop() {
  for (;;) {
    std::shared_ptr<EditJob> job;
    {
      std::unique_lock<std::mutex> lock(finish_mutex_);
      finish_ready_.wait(lock, [&] { return stopping_ || !to_finish_.empty(); });
      if (to_finish_.empty()) return;  // stopping, nothing left
      job = std::move(to_finish_.front());
      to_finish_.pop_front();
    }
    finish(job);
  }
}

void EditJobs::finish(const std::shared_ptr<EditJob>& job) {
  sdk::Request request;
  {
    std::lock_guard<std::mutex> lock(job->mutex_);
    request = job->request_;
  }
  flashps_status outcome = FLASHPS_OK;
  std::string error;
  std::shared_ptr<const std::string> encoded;
  sdk::EditStats stats;
  double encode_seconds = 0;
  try {
    sdk::EditResult result = request.result(-1);  // the terminal event came: it has resolved
    stats = result.stats;
    const auto start = Clock::now();
    const std::vector<uint8_t> bytes = result.image.encode(job->output_format_);
    encode_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    encoded = std::make_shared<const std::string>(bytes.begin(), bytes.end());
  } catch (const sdk::Error& failure) {
    outcome = failure.status() == FLASHPS_OK ? FLASHPS_ERROR : failure.status();
    error = failure.what();
  } catch (const std::exception& failure) {
    outcome = FLASHPS_ERROR;
    error = failure.what();
  }
  const char* name = outcome == FLASHPS_OK                  ? "done"
                     : outcome == FLASHPS_CANCELLED         ? "cancelled"
                     : outcome == FLASHPS_DEADLINE_EXCEEDED ? "deadline_exceeded"
                                                            : "failed";
  metrics_.count_outcome(name);
  if (outcome == FLASHPS_OK) {
    metrics_.count_cache(stats.cache_hit, stats.cache_bytes);
    metrics_.observe_edit(job->view().seconds);
  }
  {
    std::lock_guard<std::mutex> lock(job->mutex_);
    JobView& state = job->state_;
    state.finished = true;
    state.outcome = outcome;
    state.http_status = outcome == FLASHPS_OK ? 200 : http_status_of(outcome);
    if (outcome != FLASHPS_OK) state.error = error;
    state.status = outcome == FLASHPS_OK          ? FLASHPS_REQUEST_DONE
                   : outcome == FLASHPS_CANCELLED ? FLASHPS_REQUEST_CANCELLED
                                                  : FLASHPS_REQUEST_FAILED;
    state.stats = std::move(stats);
    state.encode_seconds = encode_seconds;
    state.finish_seconds = std::chrono::duration<double>(Clock::now() - job->terminal_at_).count() - encode_seconds;
    ++state.version;
    job->result_ = std::move(encoded);
    job->finished_at_ = Clock::now();
    // The engine's request holds the decoded input and result images (tens of MB at the pixel
    // limit); a finished job keeps only its encoded answer, or 256 kept edits would hold GBs.
    job->request_ = sdk::Request();
    // A phase gauge the terminal event left (it cannot: terminal is Phase::other) stays correct.
  }
  job->changed_.notify_all();
  {
    std::lock_guard<std::mutex> lock(jobs_mutex_);
    --unfinished_;
    finished_order_.push_back(job->id());
  }
  all_finished_.notify_all();
}

void EditJobs::forget_old_jobs() {
  const auto now = Clock::now();
  while (!finished_order_.empty()) {
    const auto found = jobs_.find(finished_order_.front());
    if (found == jobs_.end()) {
      finished_order_.pop_front();
      continue;
    }
    const bool too_many = finished_order_.size() > static_cast<size_t>(retention_.keep_results);
    std::chrono::steady_clock::time_point finished_at;
    {
      std::lock_guard<std::mutex> lock(found->second->mutex_);
      finished_at = found->second->finished_at_;
    }
    const bool too_old = std::chrono::duration<double>(now - finished_at).count() > retention_.keep_seconds;
    if (!too_many && !too_old) break;
    jobs_.erase(found);
    finished_order_.pop_front();
  }
}

std::shared_ptr<EditJob> EditJobs::find(const std::string& id) {
  std::lock_guard<std::mutex> lock(jobs_mutex_);
  forget_old_jobs();
  const auto found = jobs_.find(id);
  return found == jobs_.end() ? nullptr : found->second;
}

std::vector<JobView> EditJobs::list(size_t at_most) {
  std::vector<std::shared_ptr<EditJob>> jobs;
  {
    std::lock_guard<std::mutex> lock(jobs_mutex_);
    forget_old_jobs();
    for (const auto& [id, job] : jobs_) jobs.push_back(job);
  }
  std::vector<JobView> views;
  for (const auto& job : jobs) views.push_back(job->view());
  std::sort(views.begin(), views.end(), [](const JobView& a, const JobView& b) { return a.sequence > b.sequence; });
  if (views.size() > at_most) views.resize(at_most);  // the most recent
  return views;
}

int EditJobs::unfinished() const {
  std::lock_guard<std::mutex> lock(jobs_mutex_);
  return unfinished_;
}

int EditJobs::cancel_all() {
  std::vector<std::shared_ptr<EditJob>> open;
  {
    std::lock_guard<std::mutex> lock(jobs_mutex_);
    for (const auto& [id, job] : jobs_)
      if (!job->view().finished) open.push_back(job);
  }
  for (const auto& job : open) job->cancel();
  return static_cast<int>(open.size());
}

bool EditJobs::wait_all_finished(double timeout_seconds) {
  std::unique_lock<std::mutex> lock(jobs_mutex_);
  return all_finished_.wait_for(lock, duration_of(timeout_seconds), [&] { return unfinished_ == 0; });
}

}  // namespace flashps::http
