// The public C API functions the engine suite hands a plugin. The host fills this table from its
// own link to libflashps; the runner fills it with dlsym after loading libflashps only when a
// plugin asks for a model (describing a plugin and running one that needs no model never load
// LibTorch, which takes a second).
#ifndef FLASHPS_PLUGINS_ENGINE_FUNCTIONS_H
#define FLASHPS_PLUGINS_ENGINE_FUNCTIONS_H

#include "flashps/editor.h"
#include "flashps/store.h"

namespace flashps::plugins {

struct EngineFunctions {
  flashps_edit_params (*edit_default_params)(void) = nullptr;
  flashps_editor_params (*editor_default_params)(void) = nullptr;
  flashps_status (*editor_open)(const char*, const flashps_editor_params*, flashps_editor**) = nullptr;
  void (*editor_close)(flashps_editor*) = nullptr;
  flashps_status (*editor_info)(const flashps_editor*, flashps_model_info*) = nullptr;
  flashps_status (*template_lookup)(flashps_editor*, const flashps_image*, const flashps_image*,
                                    const flashps_edit_params*, int*) = nullptr;
  flashps_status (*template_register_masked)(flashps_editor*, const flashps_image*, const flashps_image*,
                                             const flashps_edit_params*, int, int, flashps_edit_stats*) = nullptr;
  flashps_status (*edit)(flashps_editor*, const flashps_image*, const flashps_image*, const flashps_edit_params*,
                         flashps_image*, flashps_edit_stats*) = nullptr;
  void (*image_free)(flashps_image*) = nullptr;
  const char* (*last_error)(void) = nullptr;
  const char* (*store_default_directory)(void) = nullptr;
  flashps_status (*init)(const flashps_runtime_options*) = nullptr;
  flashps_runtime_options (*runtime_default_options)(void) = nullptr;

  bool complete() const {
    return edit_default_params && editor_default_params && editor_open && editor_close && editor_info &&
           template_lookup && template_register_masked && edit && image_free && last_error &&
           store_default_directory && init && runtime_default_options;
  }
};

}  // namespace flashps::plugins

#endif
