#include "app_settings.h"

#include <QSettings>
#include <algorithm>

namespace flashps_paint {

AppSettings AppSettings::load() {
  QSettings store("FlashPS", "flashps-paint");
  AppSettings settings;
  const AppSettings defaults;
  settings.brush_size = store.value("brush/size", defaults.brush_size).toDouble();
  settings.brush_hardness = store.value("brush/hardness", defaults.brush_hardness).toDouble();
  settings.overlay_colour = store.value("mask/overlay_colour", defaults.overlay_colour).value<QColor>();
  settings.overlay_opacity = store.value("mask/overlay_opacity", defaults.overlay_opacity).toDouble();
  GenerationSettings& generation = settings.generation;
  const GenerationSettings& fallback = defaults.generation;
  generation.model_dir = store.value("generation/model_dir", fallback.model_dir).toString();
  generation.prompt = store.value("generation/prompt", fallback.prompt).toString();
  generation.negative_prompt = store.value("generation/negative_prompt", fallback.negative_prompt).toString();
  generation.seed = store.value("generation/seed", fallback.seed).toULongLong();
  generation.random_seed = store.value("generation/random_seed", fallback.random_seed).toBool();
  generation.steps = store.value("generation/steps", fallback.steps).toInt();
  generation.strength = store.value("generation/strength", fallback.strength).toDouble();
  generation.variations = store.value("generation/variations", fallback.variations).toInt();
  generation.grow_pixels = store.value("mask/grow", fallback.grow_pixels).toInt();
  generation.feather_pixels = store.value("mask/feather", fallback.feather_pixels).toInt();
  generation.capture_template = store.value("generation/capture_template", fallback.capture_template).toBool();
  generation.texture = std::clamp(store.value("generation/texture", fallback.texture).toInt(), -1, 1);
  settings.last_folder = store.value("files/last_folder").toString();
  settings.window_geometry = store.value("window/geometry").toByteArray();
  settings.window_state = store.value("window/state").toByteArray();
  return settings;
}

void AppSettings::save() const {
  QSettings store("FlashPS", "flashps-paint");
  store.setValue("brush/size", brush_size);
  store.setValue("brush/hardness", brush_hardness);
  store.setValue("mask/overlay_colour", overlay_colour);
  store.setValue("mask/overlay_opacity", overlay_opacity);
  store.setValue("generation/model_dir", generation.model_dir);
  store.setValue("generation/prompt", generation.prompt);
  store.setValue("generation/negative_prompt", generation.negative_prompt);
  store.setValue("generation/seed", generation.seed);
  store.setValue("generation/random_seed", generation.random_seed);
  store.setValue("generation/steps", generation.steps);
  store.setValue("generation/strength", generation.strength);
  store.setValue("generation/variations", generation.variations);
  store.setValue("mask/grow", generation.grow_pixels);
  store.setValue("mask/feather", generation.feather_pixels);
  store.setValue("generation/capture_template", generation.capture_template);
  store.setValue("generation/texture", generation.texture);
  store.setValue("files/last_folder", last_folder);
  store.setValue("window/geometry", window_geometry);
  store.setValue("window/state", window_state);
}

}  // namespace flashps_paint
