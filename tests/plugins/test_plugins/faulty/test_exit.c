/* test.exit: calls _exit(0) in ADVANCE: the runner ends "successfully" without finishing. */
#define _POSIX_C_SOURCE 200809L
#include "../test_plugin_support.h"

#include <unistd.h>

static int32_t exit_main(int32_t selector, flashps_filter_record* record) {
  (void)record;
  if (selector == FLASHPS_SELECTOR_ADVANCE) _exit(0);
  return FLASHPS_PLUGIN_OK;
}

static const flashps_plugin_descriptor descriptor =
    TEST_PLUGIN_DESCRIPTOR("test.exit", "Exit (test)", "Calls _exit(0) in ADVANCE", NULL, 0, exit_main);
TEST_PLUGIN_ENTRY(descriptor)
