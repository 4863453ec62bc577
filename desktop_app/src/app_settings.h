// Settings kept between sessions (QSettings, organisation "FlashPS", application "flashps-paint").
#pragma once
#include <QByteArray>
#include <QColor>
#include <QString>

#include "generation_controller.h"

namespace flashps_paint {

struct AppSettings {
  double brush_size = 40, brush_hardness = 0.8;
  QColor overlay_colour{255, 40, 80};
  double overlay_opacity = 0.5;
  GenerationSettings generation;
  QString last_folder;
  QByteArray window_geometry, window_state;

  static AppSettings load();
  void save() const;
};

}  // namespace flashps_paint
