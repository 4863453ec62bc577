// Runs model loading and generations off the UI thread, one job at a time on one worker thread:
// opens the chosen model as the SDK's serving Engine (flashps::sdk::Engine, which batches the
// variations step by step), submits the variations, and marshals the engine's progress events and
// results to the UI thread as queued signals. Captures go to the shared activation store (the
// CLI's: FLASHPS_CACHE_DIR, else ~/.cache/flashps/store), so another instance or `flashps edit`
// reuses them. After a run that reused no template it registers the image as one, so later edits
// of it can compute only the masked tokens; each edit reports what actually ran (edit_report.h).
#pragma once
#include <QImage>
#include <QObject>
#include <QString>
#include <QStringList>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <flashps/flashps.hpp>

#include "image_convert.h"

namespace flashps_paint {

struct GenerationSettings {
  QString model_dir;  // empty: the SDK's default model (flashps::sdk::default_model_dir())
  QString prompt, negative_prompt;  // used by models that take text (Stable Diffusion folders)
  quint64 seed = 1;
  bool random_seed = false;
  int steps = 0;  // 0: the model's recommendation (1 for the bundled model, else usually 28)
  double strength = 1.0;
  int variations = 2;
  int grow_pixels = 0, feather_pixels = 4;
  bool capture_template = true;  // after a full run, capture it for fast later edits
  int texture = -1;  // fine detail copied from the surroundings: -1 as the model recommends, 0 off, 1 on
};

struct Variation {
  QImage image;
  quint64 seed = 0;
  QString summary;  // e.g. "seed 3 · cache hit (kv) · 0.41 s"
};

// What the panel shows about a loaded model.
struct ModelSummary {
  QString option;      // the model setting it was loaded for ("" = the default model)
  QString directory;   // the folder it came from
  bool takes_text = false;
  QString description;  // e.g. "flashps-fill-small · Flux · 256 px · 1 step by default"
};

class GenerationController : public QObject {
  Q_OBJECT
 public:
  explicit GenerationController(QObject* parent = nullptr);
  ~GenerationController() override;  // cancels what runs and joins the worker

  bool busy() const { return busy_; }
  // Loads the model `model_option` names (empty: the default model) in the background, so the
  // panel learns whether it takes text and the first generation starts at once; modelReady or
  // modelFailed report the outcome. A generation loads its model itself when needed.
  void prepareModel(const QString& model_option);
  // Starts a generation; returns at once. Ignored while busy.
  void generate(const Image& image, const Image& mask, const GenerationSettings& settings);
  void cancel();

 Q_SIGNALS:
  void busyChanged(bool busy);
  void progressChanged(int done_steps, int total_steps, double seconds_per_step, const QString& stage);
  void variationReady(const flashps_paint::Variation& variation);
  void cacheStatusChanged(const QString& status);
  void timingChanged(const QString& text);
  void finished(bool cancelled);
  void failed(const QString& message);
  void notice(const QString& message);
  void modelReady(const flashps_paint::ModelSummary& model);
  void modelFailed(const QString& model_option, const QString& message);
  // The store opened (its folder), or why it could not be (captures then stay in memory).
  void storeOpened(const QString& directory);

 private:
  struct Job {
    int id = 0;
    Image image, mask;
    GenerationSettings settings;
  };
  void enqueue(std::function<void()> task);
  void workerLoop();
  // On the worker thread.
  void run(const Job& job);
  // Opens the engine for `model_option` unless it is the one loaded; `job_id` 0: a preparation.
  void loadModel(const QString& model_option, int job_id);
  flashps::sdk::EditOptions editOptions(const Job& job, int variation) const;
  std::vector<flashps::sdk::Request> submitVariations(const Job& job);
  void reportVariation(const Job& job, int index, const flashps::sdk::EditResult& result);
  void reportGeneration(const Job& job, const std::vector<flashps::sdk::EditStats>& variations);
  void captureTemplate(const Job& job, const QString& edit_status);
  void openStore();
  void finish(int job_id, bool cancelled, const QString& error);
  // Runs `call` on the UI thread unless a newer job started meanwhile (job_id 0: always).
  template <typename Call>
  void post(int job_id, Call call);

  bool busy_ = false;
  int job_id_ = 0;  // UI thread
  std::atomic<bool> cancel_requested_{false}, shutting_down_{false};
  std::mutex requests_mutex_;
  std::vector<flashps::sdk::Request> requests_;

  std::thread worker_;
  std::mutex queue_mutex_;
  std::condition_variable queue_changed_;
  std::deque<std::function<void()>> queue_;
  bool stop_worker_ = false;

  // Worker-thread state (one job at a time).
  QString loaded_option_;
  bool store_tried_ = false;
  flashps::sdk::Store store_;  // empty when it could not be opened: captures in memory
  flashps::sdk::Engine engine_;
  flashps::sdk::ModelInfo model_;
};

}  // namespace flashps_paint

Q_DECLARE_METATYPE(flashps_paint::Variation)
Q_DECLARE_METATYPE(flashps_paint::ModelSummary)
