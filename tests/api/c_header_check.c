/* Compiles the public headers as C99 with -pedantic (they must stay valid C) and calls one
 * function of each, so the library's C linkage is checked too: linked into flashps_tests, where
 * test_c_header_check.cpp runs it. */
#include <string.h>

#include "flashps/flashps.h"

int flashps_c_header_check(void) {
  flashps_runtime_options runtime = flashps_runtime_default_options();             /* common.h */
  flashps_edit_params edit = flashps_edit_default_params();                        /* editor.h */
  flashps_store_params store = flashps_store_default_params();                     /* store.h */
  flashps_engine_params engine = flashps_engine_default_params();                  /* engine.h */
  flashps_brush brush = flashps_brush_default();                                   /* mask.h */
  flashps_model_params model = flashps_model_default_params();                     /* model.h */
  if (runtime.struct_size != sizeof(flashps_runtime_options)) return 1;
  if (edit.struct_size != sizeof(flashps_edit_params)) return 2;
  if (store.struct_size != sizeof(flashps_store_params)) return 3;
  if (engine.struct_size != sizeof(flashps_engine_params)) return 4;
  if (brush.struct_size != sizeof(flashps_brush)) return 5;
  if (model.struct_size != sizeof(flashps_model_params)) return 7;
  if (strcmp(flashps_status_name(FLASHPS_NOT_FOUND), "FLASHPS_NOT_FOUND") != 0) return 6;
  return 0;
}
