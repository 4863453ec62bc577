// flashps-paint: paint a mask over an image and regenerate it with FlashPS.
//   flashps-paint [IMAGE]
#include <QApplication>

#include "core/runtime.h"
#include "main_window.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName("FlashPS");
  QApplication::setApplicationName("flashps-paint");
  flashps::init_runtime();  // LibTorch threads (FLASHPS_THREADS) and allocator, before any model
  flashps_paint::MainWindow window;
  window.show();
  const QStringList arguments = QApplication::arguments();
  if (arguments.size() > 1) window.openImage(arguments.at(1));
  return app.exec();
}
