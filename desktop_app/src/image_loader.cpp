#include "image_loader.h"

#include <QMetaObject>
#include <atomic>
#include <exception>

namespace flashps_paint {

ImageLoader::ImageLoader(QObject* parent) : QObject(parent) {}

ImageLoader::~ImageLoader() {
  current_id_ = 0;
  for (Decode& decode : decodes_) decode.thread.join();
}

void ImageLoader::load(const QString& path, Convert convert, Loaded on_loaded, Failed on_failed) {
  reapFinished();
  const int id = ++next_id_;
  current_id_ = id;
  current_path_ = path;
  on_loaded_ = std::move(on_loaded);
  on_failed_ = std::move(on_failed);
  auto done = std::make_shared<std::atomic<bool>>(false);
  const std::string file = path.toStdString();
  // The thread posts its outcome to this object (alive: the destructor joins the thread first).
  std::thread thread([this, id, file, convert = std::move(convert), done] {
    Image image;
    QString message;
    bool ok = false;
    try {
      image = convert ? convert(Image::load(file)) : Image::load(file);
      ok = true;
    } catch (const std::exception& error) {
      message = QString::fromUtf8(error.what());
    }
    QMetaObject::invokeMethod(
        this,
        [this, id, ok, image = std::move(image), message]() mutable { deliver(id, ok, std::move(image), message); },
        Qt::QueuedConnection);
    *done = true;
  });
  decodes_.push_back({std::move(thread), std::move(done)});
  Q_EMIT loadingChanged(true, path);
}

void ImageLoader::cancel() {
  if (current_id_ == 0) return;
  current_id_ = 0;
  on_loaded_ = nullptr;
  on_failed_ = nullptr;
  Q_EMIT loadingChanged(false, current_path_);
}

int ImageLoader::runningDecodes() const {
  int running = 0;
  for (const Decode& decode : decodes_) running += !*decode.done;
  return running;
}

void ImageLoader::deliver(int id, bool ok, Image image, const QString& message) {
  reapFinished();
  if (id != current_id_) return;  // cancelled, or a newer load replaced it
  current_id_ = 0;
  const Loaded on_loaded = std::move(on_loaded_);
  const Failed on_failed = std::move(on_failed_);
  on_loaded_ = nullptr;
  on_failed_ = nullptr;
  Q_EMIT loadingChanged(false, current_path_);
  if (ok) on_loaded(std::move(image));
  else on_failed(message);
}

void ImageLoader::reapFinished() {
  for (auto it = decodes_.begin(); it != decodes_.end();) {
    if (*it->done) {
      it->thread.join();
      it = decodes_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace flashps_paint
