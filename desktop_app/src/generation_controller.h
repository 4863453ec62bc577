// Runs generations off the UI thread: loads the chosen model, submits the variations to the
// SDK's serving Engine (which batches them step by step), and marshals its progress events and
// results to the UI thread as queued signals. After a full run of a Flux model it captures the
// template, so later edits of the same image compute only the masked tokens ("hit").
#pragma once
#include <QImage>
#include <QObject>
#include <QString>
#include <QStringList>
#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/image.h"

namespace flashps {
struct EditResult;
class StepwisePipeline;
class FluxInpaintPipeline;
class SDInpaintPipeline;
namespace serve {
class Engine;
class EditHandle;
}  // namespace serve
}  // namespace flashps

namespace flashps_paint {

struct GenerationSettings {
  QString model_dir;  // empty: the bundled default model
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
  QString summary;  // e.g. "seed 3 · kv cache hit · 0.41 s"
};

class GenerationController : public QObject {
  Q_OBJECT
 public:
  explicit GenerationController(QObject* parent = nullptr);
  ~GenerationController() override;  // cancels what runs and joins the worker

  // The folder `option` names, or the bundled model's.
  static QString resolveModelDir(const QString& option);
  // Stable Diffusion folders encode prompts; Flux-style ones (the bundled model) do not.
  static bool modelTakesText(const QString& model_dir);

  bool busy() const { return busy_; }
  // Starts a generation; returns at once. Ignored while busy.
  void generate(const flashps::Image& image, const flashps::Image& mask, const GenerationSettings& settings);
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

 private:
  struct Job {
    int id = 0;
    flashps::Image image, mask;
    GenerationSettings settings;
  };
  // On the worker thread.
  void run(const Job& job);
  void loadModel(const Job& job);
  std::vector<flashps::serve::EditHandle> submitVariations(const Job& job);
  void reportVariation(const Job& job, int index, const flashps::EditResult& result, const std::string& key);
  void captureTemplate(const Job& job, const std::string& image_key);
  void finish(int job_id, bool cancelled, const QString& error);
  // Runs `call` on the UI thread unless a newer job started meanwhile.
  template <typename Call>
  void post(int job_id, Call call);

  std::thread worker_;
  bool busy_ = false;
  int job_id_ = 0;                 // UI thread
  std::atomic<int> current_job_{0};
  std::atomic<bool> cancel_requested_{false};
  std::mutex handles_mutex_;
  std::vector<flashps::serve::EditHandle> handles_;

  // Worker-thread state (one job at a time).
  QString loaded_model_dir_;
  std::shared_ptr<flashps::StepwisePipeline> pipeline_;
  std::shared_ptr<flashps::FluxInpaintPipeline> flux_;  // the same pipeline when it is Flux
  std::shared_ptr<flashps::SDInpaintPipeline> sd_;      // or when it is Stable Diffusion
  std::unique_ptr<flashps::serve::Engine> engine_;
  // The last full run's seconds and what it ran on (image, steps, strength): "edit vs full run".
  double full_run_seconds_ = 0;
  std::string full_run_key_;
};

}  // namespace flashps_paint

Q_DECLARE_METATYPE(flashps_paint::Variation)
