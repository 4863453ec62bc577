// Shared by the desktop app's tests: a measure of how long the UI thread was busy, a test image,
// and keeping the user's settings and activation store out of a test's way.
#pragma once
#include <QElapsedTimer>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>
#include <algorithm>
#include <cstdint>

#include <flashps/flashps.hpp>

namespace flashps_paint::test {

// A UI thread busy longer than this between timer ticks is a visible freeze.
constexpr int kWorstGapBoundMs = 250;

// The worst gap between ticks of a 10 ms timer while it runs: how long the UI thread was busy.
class EventLoopLatency : public QObject {
 public:
  EventLoopLatency() {
    timer_.setInterval(10);
    connect(&timer_, &QTimer::timeout, this, [this] {
      worst_ms_ = std::max(worst_ms_, clock_.restart());
      ++ticks_;
    });
    clock_.start();
    timer_.start();
  }
  qint64 worstMs() const { return worst_ms_; }
  int ticks() const { return ticks_; }
  void stop() { timer_.stop(); }

 private:
  QTimer timer_;
  QElapsedTimer clock_;
  qint64 worst_ms_ = 0;
  int ticks_ = 0;
};

// Red follows x, green y, blue is fixed: every pixel differs from its neighbours.
inline flashps::sdk::Image gradient_image(int width, int height, uint8_t blue) {
  flashps::sdk::Image image(width, height, 3);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      uint8_t* pixel = &image.pixels[(size_t(y) * width + x) * 3];
      pixel[0] = uint8_t(x);
      pixel[1] = uint8_t(y);
      pixel[2] = blue;
    }
  return image;
}

// Settings go to Qt's test folder, cleared; captures to `store` (a fresh store, not the user's
// and not one a previous run filled). Call before the window is made.
inline bool isolate_settings_and_store(const QTemporaryDir& store) {
  QStandardPaths::setTestModeEnabled(true);
  QSettings("FlashPS", "flashps-paint").clear();
  if (!store.isValid()) return false;
  qputenv("FLASHPS_CACHE_DIR", store.path().toLocal8Bit());
  return true;
}

}  // namespace flashps_paint::test
