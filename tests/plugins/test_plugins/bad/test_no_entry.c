/* Refused: a shared library that exports no flashps_plugin_entry (only a function of its own). */
#include <flashps/plugin.h>

FLASHPS_PLUGIN_EXPORT int32_t test_no_entry_not_a_plugin(void) {
  return 42;
}
