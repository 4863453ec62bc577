/* test.abort: calls abort() in START; the runner dies of SIGABRT. */
#include "../test_plugin_support.h"

#include <stdlib.h>

static int32_t abort_main(int32_t selector, flashps_filter_record* record) {
  (void)record;
  if (selector == FLASHPS_SELECTOR_START) abort();
  return selector == FLASHPS_SELECTOR_ADVANCE ? FLASHPS_PLUGIN_DONE : FLASHPS_PLUGIN_OK;
}

static const flashps_plugin_descriptor descriptor =
    TEST_PLUGIN_DESCRIPTOR("test.abort", "Abort (test)", "Calls abort() in START", NULL, 0, abort_main);
TEST_PLUGIN_ENTRY(descriptor)
