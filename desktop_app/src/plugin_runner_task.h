// Runs filter plugins off the UI thread, one at a time on one worker thread (as GenerationController
// runs edits): PluginHost::run on the image and its selection, with its progress and results sent
// to the UI thread as queued signals. cancel() makes the run's progress function return false.
// A plugin that fails, crashes or hangs ends in failed(); third-party ones run in a separate
// process, so this one keeps working.
#pragma once
#include <QObject>
#include <QString>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <flashps/plugin_host.hpp>

#include "generation_controller.h"
#include "image_convert.h"

namespace flashps_paint {

// A result's caption in the staging strip, e.g. "Generative Fill · cache hit · 0.41 s", with
// "2/3" after the title when the run made several.
QString plugin_result_summary(const QString& title, const flashps::plugins::RunResult& result, int index);

class PluginRunnerTask : public QObject {
  Q_OBJECT
 public:
  explicit PluginRunnerTask(QObject* parent = nullptr);
  ~PluginRunnerTask() override;  // cancels what runs and joins the worker

  bool busy() const { return busy_; }
  // Starts `plugin` of `host` (kept alive until the run ends); returns at once. Ignored while busy.
  // `mask` empty: no selection.
  void run(std::shared_ptr<const flashps::plugins::PluginHost> host, const flashps::plugins::PluginInfo& plugin,
           const Image& image, const Image& mask, const std::map<std::string, std::string>& parameters);
  void cancel();

 Q_SIGNALS:
  void busyChanged(bool busy);
  void progressChanged(int done, int total, const QString& stage);
  void resultReady(const flashps_paint::Variation& result);
  void notice(const QString& message);
  // `title` names the plugin and what happened (e.g. "Invert crashed"); `message` is the host's.
  void failed(const QString& title, const QString& message);
  void finished(bool cancelled);

 private:
  struct Job {
    std::shared_ptr<const flashps::plugins::PluginHost> host;
    std::string name;
    QString title;
    flashps::plugins::RunRequest request;
  };
  void workerLoop();
  void execute(const Job& job);  // on the worker thread
  void finish(bool cancelled, const QString& title, const QString& message);
  template <typename Call>
  void post(Call call);  // runs `call` on the UI thread

  bool busy_ = false;  // UI thread
  std::atomic<bool> cancel_requested_{false};
  std::thread worker_;
  std::mutex queue_mutex_;
  std::condition_variable queue_changed_;
  std::deque<Job> queue_;
  bool stop_worker_ = false;
};

}  // namespace flashps_paint
