#include "generation_controller.h"

#include <QFileInfo>
#include <QMetaObject>
#include <chrono>
#include <memory>
#include <random>

namespace flashps_paint {

namespace sdk = flashps::sdk;

namespace {

bool is_cancellation(const sdk::Error& error) { return error.status() == FLASHPS_CANCELLED; }

QString model_name(const QString& option) {
  return option.isEmpty() ? QObject::tr("the default model") : QFileInfo(option).fileName();
}

QString describe(const sdk::ModelInfo& info) {
  const QString family = info.family == sdk::ModelFamily::stable_diffusion ? QObject::tr("Stable Diffusion")
                         : info.is_fill                                    ? QObject::tr("Flux Fill")
                                                                           : QObject::tr("Flux");
  return QObject::tr("%1 · %2 · %3 px · default steps: %4")
      .arg(QFileInfo(QString::fromStdString(info.model_dir)).fileName(), family)
      .arg(info.native_size)
      .arg(info.default_steps);
}

}  // namespace

GenerationController::GenerationController(QObject* parent) : QObject(parent) {
  qRegisterMetaType<Variation>();
  qRegisterMetaType<ModelSummary>();
  worker_ = std::thread([this] { workerLoop(); });
}

GenerationController::~GenerationController() {
  shutting_down_ = true;  // a load in progress stops at its next progress report
  cancel();
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    queue_.clear();
    stop_worker_ = true;
  }
  queue_changed_.notify_all();
  worker_.join();  // the worker closes the engine (cancels what is left, joins its threads)
}

void GenerationController::enqueue(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    queue_.push_back(std::move(task));
  }
  queue_changed_.notify_all();
}

void GenerationController::workerLoop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(queue_mutex_);
      queue_changed_.wait(lock, [this] { return stop_worker_ || !queue_.empty(); });
      if (stop_worker_) break;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
  engine_.close();
}

template <typename Call>
void GenerationController::post(int job_id, Call call) {
  QMetaObject::invokeMethod(
      this,
      [this, job_id, call] {
        if (job_id == 0 || job_id == job_id_) call();
      },
      Qt::QueuedConnection);
}

void GenerationController::prepareModel(const QString& model_option) {
  enqueue([this, model_option] {
    try {
      loadModel(model_option, 0);
    } catch (const std::exception& error) {
      const QString message = QString::fromUtf8(error.what());
      post(0, [this, model_option, message] { Q_EMIT modelFailed(model_option, message); });
    }
  });
}

void GenerationController::generate(const Image& image, const Image& mask, const GenerationSettings& settings) {
  if (busy_) return;
  Job job{++job_id_, image, mask, settings};
  if (job.settings.random_seed) job.settings.seed = std::random_device{}();
  cancel_requested_ = false;
  busy_ = true;
  Q_EMIT busyChanged(true);
  Q_EMIT progressChanged(0, settings.steps * settings.variations, 0, tr("Starting"));
  enqueue([this, job = std::move(job)] { run(job); });
}

void GenerationController::cancel() {
  cancel_requested_ = true;
  std::lock_guard<std::mutex> lock(requests_mutex_);
  for (const sdk::Request& request : requests_) {
    try {
      request.cancel();
    } catch (const sdk::Error&) {
      // Nothing to stop: its outcome (the error) is reported when the worker collects it.
    }
  }
}

void GenerationController::finish(int job_id, bool cancelled, const QString& error) {
  post(job_id, [this, cancelled, error] {
    busy_ = false;
    Q_EMIT busyChanged(false);
    if (!error.isEmpty()) Q_EMIT failed(error);
    Q_EMIT finished(cancelled);
  });
}

void GenerationController::loadModel(const QString& model_option, int job_id) {
  if (!engine_ || model_option != loaded_option_) {
    const QString stage = tr("Loading %1").arg(model_name(model_option));
    if (job_id != 0) post(job_id, [this, stage] { Q_EMIT progressChanged(0, 0, 0, stage); });
    engine_.close();
    loaded_option_.clear();
    sdk::EngineOptions options;  // one CPU worker; captures stay in memory (the images edited now)
    options.progress = [this, job_id](const std::string&, int, int, double) {
      return !shutting_down_ && !(job_id != 0 && cancel_requested_);
    };
    engine_ = sdk::Engine::open(model_option.toStdString(), options);
    model_ = engine_.info();
    loaded_option_ = model_option;
  }
  const ModelSummary summary{model_option, QString::fromStdString(model_.model_dir), model_.takes_text,
                             describe(model_)};
  post(0, [this, summary] { Q_EMIT modelReady(summary); });
}

sdk::EditOptions GenerationController::editOptions(const Job& job, int variation) const {
  const GenerationSettings& settings = job.settings;
  sdk::EditOptions options;
  options.seed = settings.seed + quint64(variation);
  options.steps = settings.steps;
  options.strength = float(settings.strength);
  options.mask_grow_pixels = settings.grow_pixels;
  options.mask_feather_pixels = settings.feather_pixels;
  if (settings.texture >= 0) options.texture_transfer = settings.texture == 1;
  if (model_.takes_text) {
    options.prompt = settings.prompt.toStdString();
    options.negative_prompt = settings.negative_prompt.toStdString();
  }
  return options;
}

std::vector<sdk::Request> GenerationController::submitVariations(const Job& job) {
  const GenerationSettings& settings = job.settings;
  const int count = std::max(1, settings.variations);
  // Per variation: steps done and steps it runs (the engine knows: strength < 1 runs fewer,
  // PLMS one more, 0 = the model's recommendation).
  auto steps_done = std::make_shared<std::vector<std::atomic<int>>>(count);
  auto steps_total = std::make_shared<std::vector<std::atomic<int>>>(count);
  for (auto& steps : *steps_total) steps = settings.steps;
  const auto started = std::chrono::steady_clock::now();
  auto first_step = std::make_shared<std::atomic<double>>(-1.0);
  post(job.id, [this, total_steps = count * settings.steps] {
    Q_EMIT cacheStatusChanged(tr("computing…"));
    Q_EMIT progressChanged(0, total_steps, 0, tr("Generating"));
  });
  std::lock_guard<std::mutex> lock(requests_mutex_);
  requests_.clear();
  for (int i = 0; i < count; ++i) {
    sdk::SubmitOptions submit;
    // On the engine's event thread: count steps, post the total (cheap, no locks).
    submit.on_event = [this, job_id = job.id, i, count, steps_done, steps_total, started,
                       first_step](const sdk::Event& event) {
      if (event.status != FLASHPS_REQUEST_RUNNING) return;
      const double now = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      double expected = -1.0;
      first_step->compare_exchange_strong(expected, now);
      (*steps_done)[i] = event.step;
      if (event.steps > 0) (*steps_total)[i] = event.steps;
      int done = 0, total_steps = 0;
      for (int k = 0; k < count; ++k) {
        done += (*steps_done)[k];
        total_steps += (*steps_total)[k];
      }
      // Seconds per batched step: the variations step together.
      const double batched_steps = double(done) / count;
      const double per_step = batched_steps > 1 ? (now - first_step->load()) / (batched_steps - 1) : 0.0;
      post(job_id, [this, done, total_steps, per_step] {
        Q_EMIT progressChanged(done, total_steps, per_step, tr("Generating"));
      });
    };
    requests_.push_back(engine_.submit(job.image, job.mask, editOptions(job, i), submit));
  }
  return requests_;
}

void GenerationController::reportVariation(const Job& job, int index, const sdk::EditResult& result) {
  const sdk::EditStats& stats = result.stats;
  const quint64 seed = job.settings.seed + quint64(index);
  Variation variation{to_qimage(result.image), seed, {}};
  variation.summary = tr("seed %1 · %2%3 · %4 s")
                          .arg(seed)
                          .arg(QString::fromLatin1(sdk::cache_mode_name(stats.mode_used)))
                          .arg(stats.cache_hit ? tr(" cache hit") : QString())
                          .arg(stats.total_seconds, 0, 'f', 2);
  const QString timing = stats.cache_hit ? tr("this edit %1 s (%2× less compute per step than a full run)")
                                               .arg(stats.total_seconds, 0, 'f', 2)
                                               .arg(stats.compute_saving, 0, 'f', 1)
                                         : tr("full run %1 s (no template reused)").arg(stats.total_seconds, 0, 'f', 2);
  QString status;
  if (stats.cache_hit)
    status = tr("hit: %1 of %2 blocks from the template cache")
                 .arg(stats.blocks_from_cache)
                 .arg(stats.blocks_from_cache + stats.blocks_computed);
  else
    status = tr("computed in full (no captured template matched this image and settings)");
  QStringList notes;
  for (const std::string& note : stats.notes) notes << QString::fromStdString(note);
  post(job.id, [this, variation, timing, status, notes] {
    Q_EMIT variationReady(variation);
    Q_EMIT timingChanged(timing);
    Q_EMIT cacheStatusChanged(status);
    for (const QString& note : notes) Q_EMIT notice(note);
  });
}

void GenerationController::run(const Job& job) {
  try {
    loadModel(job.settings.model_dir, job.id);
    if (cancel_requested_) throw sdk::Error(FLASHPS_CANCELLED, "cancelled");
    const std::vector<sdk::Request> requests = submitVariations(job);
    if (cancel_requested_) cancel();  // a cancel that came before the requests existed
    bool any_hit = false, any_cancelled = false;
    for (size_t i = 0; i < requests.size(); ++i) {
      sdk::EditResult result;
      try {
        result = requests[i].result();
      } catch (const sdk::Error& error) {
        if (!is_cancellation(error)) throw;
        any_cancelled = true;
        continue;
      }
      any_hit = any_hit || result.stats.cache_hit;
      reportVariation(job, int(i), result);
    }
    if (any_cancelled || cancel_requested_) throw sdk::Error(FLASHPS_CANCELLED, "cancelled");
    if (job.settings.capture_template && !any_hit) captureTemplate(job);
    finish(job.id, false, {});
  } catch (const sdk::Error& error) {
    if (!is_cancellation(error)) return finish(job.id, false, QString::fromUtf8(error.what()));
    post(job.id, [this] { Q_EMIT cacheStatusChanged(tr("cancelled")); });
    finish(job.id, true, {});
  } catch (const std::exception& error) {
    finish(job.id, false, QString::fromUtf8(error.what()));
  }
}

void GenerationController::captureTemplate(const Job& job) {
  // The variations have resolved; the engine runs the template in full and keeps its capture.
  // The same options as the first variation, so the edits to come look it up under one key, and
  // the mask: the same window around it as the edits.
  sdk::EditOptions options = editOptions(job, 0);
  const int job_id = job.id;
  options.progress = [this, job_id](const std::string& stage, int step, int total_steps, double seconds) {
    if (stage == "denoise")
      post(job_id, [this, step, total_steps, seconds] {
        Q_EMIT progressChanged(step, total_steps, step > 0 ? seconds / step : 0.0, tr("Capturing template"));
      });
    return !cancel_requested_.load();
  };
  post(job_id, [this] { Q_EMIT cacheStatusChanged(tr("capturing the template…")); });
  const sdk::EditStats stats = engine_.register_template(job.image, &job.mask, options);
  const QString status = tr("captured (%1 MB, %2 s): edits of this image now reuse it")
                             .arg(stats.cache_bytes / 1e6, 0, 'f', 1)
                             .arg(stats.total_seconds, 0, 'f', 2);
  post(job_id, [this, status] { Q_EMIT cacheStatusChanged(status); });
}

}  // namespace flashps_paint
