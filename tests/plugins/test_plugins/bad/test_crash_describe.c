/* Refused: the entry point crashes (writes through a NULL pointer) while the host reads the
 * descriptor; the host must survive it and report the library. */
#include "../test_plugin_support.h"

static const flashps_plugin_descriptor descriptor = TEST_PLUGIN_DESCRIPTOR(
    "test.crash-describe", "Crash while describing (test)", "Crashes in flashps_plugin_entry", NULL, 0,
    test_copy_main);

FLASHPS_PLUGIN_EXPORT const flashps_plugin_descriptor* flashps_plugin_entry(uint32_t host_abi_version) {
  volatile int* volatile nowhere = NULL; /* volatile both: the compiler must emit the write */
  *nowhere = (int)host_abi_version;
  return &descriptor;
}
