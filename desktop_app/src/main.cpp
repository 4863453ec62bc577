// flashps-paint: paint a mask over an image and regenerate it with FlashPS.
//   flashps-paint [IMAGE]
#include <QApplication>
#include <QMessageBox>
#include <cstdio>
#include <flashps/flashps.hpp>

#include "main_window.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName("FlashPS");
  QApplication::setApplicationName("flashps-paint");
  // Process-wide SDK settings before any model: threads from FLASHPS_THREADS (else all cores),
  // malloc keeping freed memory (LibTorch on CPUs is much faster so).
  try {
    flashps::sdk::init();
  } catch (const flashps::sdk::Error& error) {  // e.g. FLASHPS_THREADS=abc: say so, do not crash
    std::fprintf(stderr, "flashps-paint: error: %s\n", error.what());
    QMessageBox::critical(nullptr, "flashps-paint", QString::fromStdString(error.what()));
    return 1;
  }
  flashps_paint::MainWindow window;
  window.show();
  const QStringList arguments = QApplication::arguments();
  if (arguments.size() > 1) window.openImage(arguments.at(1));
  return app.exec();
}
