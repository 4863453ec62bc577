#include "generation_controller.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QMetaObject>
#include <chrono>
#include <random>

#include "core/content_hash.h"
#include "core/error.h"
#include "image_convert.h"
#include "models/default_model.h"
#include "pipeline/flux_inpaint_pipeline.h"
#include "pipeline/sd_inpaint_pipeline.h"
#include "serve/engine.h"
#include "serve/flux_device.h"
#include "serve/sd_device.h"

namespace flashps_paint {

using flashps::EditRequest;
using flashps::EditResult;
namespace serve = flashps::serve;

namespace {

std::vector<std::string> bundled_model_dirs() {
  // A build (source tree), a package (data folder), or a relocated install (next to bin/).
  const QString app_dir = QCoreApplication::applicationDirPath();
  return {QDir(FLASHPS_SOURCE_DIR).filePath("samples/models/flashps-fill-small").toStdString(),
          QDir(FLASHPS_DATA_DIR).filePath("models/flashps-fill-small").toStdString(),
          QDir(app_dir).filePath("../share/flashps/models/flashps-fill-small").toStdString()};
}

std::string template_key(const flashps::Image& image, const GenerationSettings& settings) {
  flashps::ContentHasher hasher;
  hasher.update(image.pixels.data(), image.pixels.size());
  return hasher.hex() + "/" + std::to_string(image.width) + "x" + std::to_string(image.height) + "/" +
         std::to_string(settings.steps) + "/" + std::to_string(settings.strength);
}

}  // namespace

GenerationController::GenerationController(QObject* parent) : QObject(parent) {
  qRegisterMetaType<Variation>();
}

GenerationController::~GenerationController() {
  cancel();
  if (worker_.joinable()) worker_.join();
  engine_.reset();  // cancels anything left and joins the engine's threads before the pipeline goes
}

QString GenerationController::resolveModelDir(const QString& option) {
  return QString::fromStdString(flashps::choose_model(option.toStdString(), bundled_model_dirs()).dir);
}

bool GenerationController::modelTakesText(const QString& model_dir) {
  // The bundled default is Flux-style (no text); only named folders are inspected.
  if (model_dir.isEmpty()) return false;
  try {
    return flashps::is_stable_diffusion_folder(model_dir.toStdString());
  } catch (const std::exception&) {
    return false;  // an unreadable model_index.json: loading the model reports it
  }
}

template <typename Call>
void GenerationController::post(int job_id, Call call) {
  QMetaObject::invokeMethod(
      this,
      [this, job_id, call] {
        if (job_id == job_id_) call();
      },
      Qt::QueuedConnection);
}

void GenerationController::generate(const flashps::Image& image, const flashps::Image& mask,
                                    const GenerationSettings& settings) {
  if (busy_) return;
  if (worker_.joinable()) worker_.join();  // the previous job has posted its end: it is leaving
  Job job{++job_id_, image, mask, settings};
  if (job.settings.random_seed) job.settings.seed = std::random_device{}();
  cancel_requested_ = false;
  busy_ = true;
  Q_EMIT busyChanged(true);
  Q_EMIT progressChanged(0, settings.steps * settings.variations, 0, tr("Starting"));
  worker_ = std::thread([this, job = std::move(job)] { run(job); });
}

void GenerationController::cancel() {
  cancel_requested_ = true;
  std::lock_guard<std::mutex> lock(handles_mutex_);
  for (serve::EditHandle& handle : handles_) handle.cancel();
}

void GenerationController::finish(int job_id, bool cancelled, const QString& error) {
  post(job_id, [this, cancelled, error] {
    busy_ = false;
    Q_EMIT busyChanged(false);
    if (!error.isEmpty()) Q_EMIT failed(error);
    Q_EMIT finished(cancelled);
  });
}

void GenerationController::loadModel(const Job& job) {
  const flashps::ModelChoice choice = flashps::choose_model(job.settings.model_dir.toStdString(), bundled_model_dirs());
  const QString dir = QString::fromStdString(choice.dir);
  for (const std::string& note : choice.notes) post(job.id, [this, note] { Q_EMIT notice(QString::fromStdString(note)); });
  if (engine_ && dir == loaded_model_dir_) return;
  post(job.id, [this, dir] { Q_EMIT progressChanged(0, 0, 0, tr("Loading %1").arg(QFileInfo(dir).fileName())); });
  engine_.reset();
  pipeline_.reset();
  flux_.reset();
  sd_.reset();
  full_run_key_.clear();
  serve::EngineOptions options;
  if (flashps::is_stable_diffusion_folder(dir.toStdString())) {
    sd_ = std::shared_ptr<flashps::SDInpaintPipeline>(flashps::SDInpaintPipeline::load(dir.toStdString(), at::kFloat));
    pipeline_ = sd_;
    engine_ = std::make_unique<serve::Engine>(std::vector<serve::EngineDevice>{serve::sd_engine_device(sd_)}, options);
  } else {
    // Captures stay in memory: the app's templates are the images being edited right now.
    flux_ = std::shared_ptr<flashps::FluxInpaintPipeline>(flashps::FluxInpaintPipeline::load(dir.toStdString(), at::kFloat));
    pipeline_ = flux_;
    engine_ = std::make_unique<serve::Engine>(std::vector<serve::EngineDevice>{serve::flux_engine_device(flux_)}, options);
  }
  loaded_model_dir_ = dir;
}

std::vector<serve::EditHandle> GenerationController::submitVariations(const Job& job) {
  const GenerationSettings& settings = job.settings;
  const int count = std::max(1, settings.variations);
  // Per variation: steps done and steps it runs (the engine knows: strength < 1 runs fewer,
  // PLMS one more).
  auto steps_done = std::make_shared<std::vector<std::atomic<int>>>(count);
  auto steps_total = std::make_shared<std::vector<std::atomic<int>>>(count);
  for (auto& steps : *steps_total) steps = settings.steps;
  const auto started = std::chrono::steady_clock::now();
  auto first_step = std::make_shared<std::atomic<double>>(-1.0);
  post(job.id, [this, total_steps = count * settings.steps] {
    Q_EMIT cacheStatusChanged(tr("computing…"));
    Q_EMIT progressChanged(0, total_steps, 0, tr("Generating"));
  });
  std::lock_guard<std::mutex> lock(handles_mutex_);
  handles_.clear();
  for (int i = 0; i < count; ++i) {
    EditRequest request;
    request.image = job.image;
    request.mask = job.mask;
    request.seed = settings.seed + i;
    request.steps = settings.steps;
    request.strength = settings.strength;
    request.mask_grow_pixels = settings.grow_pixels;
    request.mask_feather_pixels = settings.feather_pixels;
    if (settings.texture >= 0) request.texture_transfer = settings.texture == 1;
    if (!flux_) {
      request.prompt = settings.prompt.toStdString();
      request.negative_prompt = settings.negative_prompt.toStdString();
    }
    serve::SubmitOptions submit;
    // On the engine's event thread: count steps, post the total (cheap, no locks).
    submit.on_event = [this, job_id = job.id, i, count, steps_done, steps_total, started,
                       first_step](const serve::ServeEvent& event) {
      if (event.status != serve::RequestStatus::running) return;
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
    handles_.push_back(engine_->submit(std::move(request), std::move(submit)));
  }
  return handles_;
}

void GenerationController::reportVariation(const Job& job, int index, const EditResult& result,
                                           const std::string& key) {
  const flashps::EditStats& stats = result.stats;
  if (!stats.cache_hit) {
    full_run_seconds_ = stats.total_seconds;
    full_run_key_ = key;
  }
  const quint64 seed = job.settings.seed + index;
  Variation variation{to_qimage(result.image), seed, {}};
  variation.summary = tr("seed %1 · %2%3 · %4 s")
                          .arg(seed)
                          .arg(QString::fromLatin1(flashps::compute_mode_name(stats.mode_used)))
                          .arg(stats.cache_hit ? tr(" cache hit") : QString())
                          .arg(stats.total_seconds, 0, 'f', 2);
  QString timing = stats.cache_hit ? tr("this edit %1 s (%2× less compute per step)")
                                         .arg(stats.total_seconds, 0, 'f', 2)
                                         .arg(stats.compute_saving, 0, 'f', 1)
                                   : tr("full run %1 s (no template to reuse)").arg(stats.total_seconds, 0, 'f', 2);
  if (stats.cache_hit && full_run_key_ == key) timing += tr(" vs full run %1 s").arg(full_run_seconds_, 0, 'f', 2);
  QString status;
  if (stats.cache_hit)
    status = tr("hit: %1 of %2 blocks from the template cache")
                 .arg(stats.blocks_from_cache)
                 .arg(stats.blocks_from_cache + stats.blocks_computed);
  else
    status = tr("computed in full (no template captured for this image and settings yet)");
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
    loadModel(job);
    if (cancel_requested_) throw flashps::Cancelled();
    const std::vector<serve::EditHandle> handles = submitVariations(job);
    if (cancel_requested_) cancel();  // a cancel that came before the handles existed
    const std::string key = template_key(job.image, job.settings);
    bool any_hit = false, any_cancelled = false;
    for (size_t i = 0; i < handles.size(); ++i) {
      EditResult result;
      try {
        result = handles[i].wait();
      } catch (const flashps::Cancelled&) {
        any_cancelled = true;
        continue;
      }
      any_hit = any_hit || result.stats.cache_hit;
      reportVariation(job, int(i), result, key);
    }
    if (any_cancelled || cancel_requested_) throw flashps::Cancelled();
    if (job.settings.capture_template && !any_hit) captureTemplate(job, key);
    finish(job.id, false, {});
  } catch (const flashps::Cancelled&) {
    post(job.id, [this] { Q_EMIT cacheStatusChanged(tr("cancelled")); });
    finish(job.id, true, {});
  } catch (const std::exception& error) {
    finish(job.id, false, QString::fromUtf8(error.what()));
  }
}

void GenerationController::captureTemplate(const Job& job, const std::string& key) {
  // The engine is idle (every variation resolved), so this thread may run the pipeline alone.
  EditRequest request;
  request.image = job.image;
  request.mask = job.mask;  // the same window around the mask as the edits
  request.seed = job.settings.seed;
  request.steps = job.settings.steps;
  request.strength = job.settings.strength;
  const int job_id = job.id;
  request.progress = [this, job_id](const flashps::ProgressEvent& event) {
    if (event.stage == "denoise")
      post(job_id, [this, event] {
        Q_EMIT progressChanged(event.step, event.total_steps,
                               event.step > 0 ? event.stage_seconds / event.step : 0.0, tr("Capturing template"));
      });
    return !cancel_requested_.load();
  };
  post(job_id, [this] { Q_EMIT cacheStatusChanged(tr("capturing the template…")); });
  flashps::TemplateInfo info;
  if (sd_) {  // UNets replay transformer-block outputs (hidden); the prompt shapes the capture
    request.prompt = job.settings.prompt.toStdString();
    request.negative_prompt = job.settings.negative_prompt.toStdString();
    info = sd_->register_template(request);
  } else {
    info = flux_->register_template(request, /*capture_kv=*/true, /*capture_hidden=*/false);
  }
  full_run_seconds_ = info.seconds;
  full_run_key_ = key;
  const QString status = tr("captured (%1 MB): edits of this image now reuse it").arg(info.bytes / 1e6, 0, 'f', 1);
  post(job_id, [this, status] { Q_EMIT cacheStatusChanged(status); });
}

}  // namespace flashps_paint
