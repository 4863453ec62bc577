/* test.hang: spins forever in ADVANCE, reporting nothing and ignoring cancel: only the host's
 * idle timeout (killing the runner) ends it. */
#include "../test_plugin_support.h"

static int32_t hang_main(int32_t selector, flashps_filter_record* record) {
  (void)record;
  if (selector == FLASHPS_SELECTOR_ADVANCE) {
    volatile uint64_t spins = 0; /* volatile: the loop has an effect, so it is not optimised out */
    for (;;) ++spins;
  }
  return FLASHPS_PLUGIN_OK;
}

static const flashps_plugin_descriptor descriptor =
    TEST_PLUGIN_DESCRIPTOR("test.hang", "Hang (test)", "Loops forever in ADVANCE", NULL, 0, hang_main);
TEST_PLUGIN_ENTRY(descriptor)
