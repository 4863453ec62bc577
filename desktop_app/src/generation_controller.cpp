#include "generation_controller.h"

#include <QFileInfo>
#include <QMetaObject>
#include <chrono>
#include <memory>
#include <random>

#include "edit_report.h"

namespace flashps_paint {

namespace sdk = flashps::sdk;

namespace {

bool is_cancellation(const sdk::Error& error) { return error.status() == FLASHPS_CANCELLED; }

QString model_name(const QString& option) {
  return option.isEmpty() ? QObject::tr("the default model") : QFileInfo(option).fileName();
}

QString describe(const sdk::ModelInfo& info) {
  const QString family = info.family == sdk::ModelFamily::other ? QString::fromStdString(info.family_name)
                         : info.family == sdk::ModelFamily::stable_diffusion ? QObject::tr("Stable Diffusion")
                         : info.is_fill                                      ? QObject::tr("Flux Fill")
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
    openStore();
    sdk::EngineOptions options;  // one CPU worker
    options.store = store_;      // empty: captures in memory
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

void GenerationController::openStore() {
  if (store_tried_) return;
  store_tried_ = true;
  try {
    store_ = sdk::Store::open();  // the SDK's default folder, as the CLI's: FLASHPS_CACHE_DIR or ~/.cache
    const QString directory = QString::fromStdString(store_.directory());
    post(0, [this, directory] { Q_EMIT storeOpened(directory); });
  } catch (const std::exception& error) {
    const QString message = tr("the activation store cannot be opened (%1): captures are kept in memory for this "
                               "session")
                                .arg(QString::fromUtf8(error.what()));
    post(0, [this, message] {
      Q_EMIT storeOpened({});
      Q_EMIT notice(message);
    });
  }
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
  const quint64 seed = job.settings.seed + quint64(index);
  const Variation variation{to_qimage(result.image), seed, variation_summary(seed, result.stats)};
  QStringList notes;
  for (const std::string& note : result.stats.notes) notes << QString::fromStdString(note);
  post(job.id, [this, variation, notes] {
    Q_EMIT variationReady(variation);
    for (const QString& note : notes) Q_EMIT notice(note);
  });
}

void GenerationController::reportGeneration(const Job& job, const std::vector<sdk::EditStats>& variations) {
  const QString timing = timing_text(variations), status = cache_status(variations);
  post(job.id, [this, timing, status] {
    Q_EMIT timingChanged(timing);
    Q_EMIT cacheStatusChanged(status);
  });
}

void GenerationController::run(const Job& job) {
  try {
    loadModel(job.settings.model_dir, job.id);
    if (cancel_requested_) throw sdk::Error(FLASHPS_CANCELLED, "cancelled");
    const std::vector<sdk::Request> requests = submitVariations(job);
    if (cancel_requested_) cancel();  // a cancel that came before the requests existed
    bool any_hit = false, any_cancelled = false;
    std::vector<sdk::EditStats> done;
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
      done.push_back(std::move(result.stats));
    }
    if (!done.empty()) reportGeneration(job, done);
    if (any_cancelled || cancel_requested_) throw sdk::Error(FLASHPS_CANCELLED, "cancelled");
    if (job.settings.capture_template && !any_hit) captureTemplate(job, cache_status(done));
    finish(job.id, false, {});
  } catch (const sdk::Error& error) {
    if (!is_cancellation(error)) return finish(job.id, false, QString::fromUtf8(error.what()));
    post(job.id, [this] { Q_EMIT cacheStatusChanged(tr("cancelled")); });
    finish(job.id, true, {});
  } catch (const std::exception& error) {
    finish(job.id, false, QString::fromUtf8(error.what()));
  }
}

void GenerationController::captureTemplate(const Job& job, const QString& edit_status) {
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
  const QString capturing = tr("%1; capturing the template…").arg(edit_status);
  post(job_id, [this, capturing] { Q_EMIT cacheStatusChanged(capturing); });
  const sdk::EditStats stats = engine_.register_template(job.image, &job.mask, options);
  const QString where = store_ ? QString::fromStdString(store_.directory()) : QString();
  // The edit's own outcome stays in view: the capture serves later edits, not this one.
  const QString status = tr("%1; then %2").arg(edit_status, capture_status(stats, where));
  post(job_id, [this, status] { Q_EMIT cacheStatusChanged(status); });
}

}  // namespace flashps_paint
