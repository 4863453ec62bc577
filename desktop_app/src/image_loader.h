// Decodes image files off the UI thread, so a large or hostile file never freezes the window.
// One load at a time from the UI's point of view: a new load or cancel() drops the result of the
// one before (its decode still ends on its own thread; the SDK bounds its time and memory), and
// results arrive on the UI thread through the callbacks given to load().
#pragma once
#include <QObject>
#include <QString>
#include <atomic>
#include <functional>
#include <list>
#include <memory>
#include <thread>

#include "image_convert.h"

namespace flashps_paint {

class ImageLoader : public QObject {
  Q_OBJECT
 public:
  // On the decode thread: the file's image turned into what the caller keeps (e.g. RGB, a mask).
  using Convert = std::function<Image(Image loaded)>;
  using Loaded = std::function<void(Image image)>;
  using Failed = std::function<void(const QString& message)>;

  explicit ImageLoader(QObject* parent = nullptr);
  ~ImageLoader() override;  // joins the decode threads still running

  void load(const QString& path, Convert convert, Loaded on_loaded, Failed on_failed);
  void cancel();  // the current load's callbacks are never called
  bool loading() const { return current_id_ != 0; }
  QString path() const { return current_path_; }
  // Decode threads still running, dropped ones included (tests wait for 0).
  int runningDecodes() const;

 Q_SIGNALS:
  void loadingChanged(bool loading, const QString& path);

 private:
  struct Decode {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  void deliver(int id, bool ok, Image image, const QString& message);
  void reapFinished();

  int next_id_ = 0, current_id_ = 0;
  QString current_path_;
  Loaded on_loaded_;
  Failed on_failed_;
  std::list<Decode> decodes_;
};

}  // namespace flashps_paint
