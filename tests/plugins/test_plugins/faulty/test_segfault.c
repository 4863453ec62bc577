/* test.segfault: writes through a NULL pointer in START; the runner dies of SIGSEGV. */
#include "../test_plugin_support.h"

static int32_t segfault_main(int32_t selector, flashps_filter_record* record) {
  (void)record;
  if (selector == FLASHPS_SELECTOR_START) {
    volatile int* volatile nowhere = NULL; /* volatile both: the compiler must emit the write */
    *nowhere = 1;
  }
  return selector == FLASHPS_SELECTOR_ADVANCE ? FLASHPS_PLUGIN_DONE : FLASHPS_PLUGIN_OK;
}

static const flashps_plugin_descriptor descriptor = TEST_PLUGIN_DESCRIPTOR(
    "test.segfault", "Segfault (test)", "Crashes with SIGSEGV in START", NULL, 0, segfault_main);
TEST_PLUGIN_ENTRY(descriptor)
