/* Compiles flashps.h as C: the public header must stay valid C. */
#include "flashps/flashps.h"

int flashps_c_header_check(void) {
  flashps_edit_params params = flashps_edit_default_params();
  return params.struct_size == sizeof(flashps_edit_params) ? FLASHPS_OK : FLASHPS_ERROR;
}
