#include "plugin_runner_task.h"

#include <QMetaObject>
#include <exception>

#include "filter_menu.h"

namespace flashps_paint {

namespace fp = flashps::plugins;

QString plugin_result_summary(const QString& title, const fp::RunResult& result, int index) {
  const int count = int(result.images.size());
  QString caption = count > 1 ? QObject::tr("%1 %2/%3").arg(title).arg(index + 1).arg(count) : title;
  if (result.cache_hit) caption += QObject::tr(" · cache hit");
  return caption + QObject::tr(" · %1 s").arg(result.seconds, 0, 'f', 2);
}

PluginRunnerTask::PluginRunnerTask(QObject* parent) : QObject(parent) {
  qRegisterMetaType<Variation>();
  worker_ = std::thread([this] { workerLoop(); });
}

PluginRunnerTask::~PluginRunnerTask() {
  cancel();  // a run stops at its next progress report (the host asks at least every 200 ms)
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    queue_.clear();
    stop_worker_ = true;
  }
  queue_changed_.notify_all();
  worker_.join();
}

template <typename Call>
void PluginRunnerTask::post(Call call) {
  QMetaObject::invokeMethod(this, call, Qt::QueuedConnection);
}

void PluginRunnerTask::run(std::shared_ptr<const fp::PluginHost> host, const fp::PluginInfo& plugin,
                           const Image& image, const Image& mask,
                           const std::map<std::string, std::string>& parameters) {
  if (busy_ || !host) return;
  Job job{std::move(host), plugin.name, plugin_title(plugin), {}};
  job.request.image = image;
  job.request.mask = mask;
  job.request.parameters = parameters;
  cancel_requested_ = false;
  busy_ = true;
  Q_EMIT busyChanged(true);
  Q_EMIT progressChanged(0, 0, tr("Starting"));
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    queue_.push_back(std::move(job));
  }
  queue_changed_.notify_all();
}

void PluginRunnerTask::cancel() { cancel_requested_ = true; }

void PluginRunnerTask::workerLoop() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(queue_mutex_);
      queue_changed_.wait(lock, [this] { return stop_worker_ || !queue_.empty(); });
      if (stop_worker_) break;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    execute(job);
  }
}

void PluginRunnerTask::finish(bool cancelled, const QString& title, const QString& message) {
  post([this, cancelled, title, message] {
    busy_ = false;
    Q_EMIT busyChanged(false);
    if (!message.isEmpty()) Q_EMIT failed(title, message);
    Q_EMIT finished(cancelled);
  });
}

void PluginRunnerTask::execute(const Job& job) {
  fp::RunRequest request = job.request;
  // Called on the host's thread for each report and heartbeat: cheap, no locks.
  request.progress = [this](const fp::Progress& progress) {
    const int done = progress.done, total = progress.total;
    const QString stage = QString::fromStdString(progress.stage);
    post([this, done, total, stage] { Q_EMIT progressChanged(done, total, stage); });
    return !cancel_requested_.load();
  };
  try {
    const fp::RunResult result = job.host->run(job.name, request);
    for (size_t i = 0; i < result.images.size(); ++i) {
      const Variation variation{to_qimage(result.images[i]), 0, plugin_result_summary(job.title, result, int(i))};
      post([this, variation] { Q_EMIT resultReady(variation); });
    }
    for (const std::string& note : result.notes) {
      const QString text = QString::fromStdString(note);
      post([this, text] { Q_EMIT notice(text); });
    }
    finish(false, {}, {});
  } catch (const fp::PluginError& error) {
    if (error.failure() == fp::Failure::cancelled && cancel_requested_) return finish(true, {}, {});
    const bool died = error.failure() == fp::Failure::crashed || error.failure() == fp::Failure::out_of_memory ||
                      error.failure() == fp::Failure::hung || error.failure() == fp::Failure::exited ||
                      error.failure() == fp::Failure::protocol;
    const QString title = error.failure() == fp::Failure::crashed ? tr("%1 crashed").arg(job.title)
                                                                  : tr("%1 failed").arg(job.title);
    // A runner that died took nothing else with it: say so, the user may fear for the image.
    QString message = QString::fromUtf8(error.what());
    if (died) message += tr("\n\nThe plugin ran in its own process: FlashPS Paint and your image are unaffected.");
    finish(false, title, message);
  } catch (const std::exception& error) {
    finish(false, tr("%1 failed").arg(job.title), QString::fromUtf8(error.what()));
  }
}

}  // namespace flashps_paint
