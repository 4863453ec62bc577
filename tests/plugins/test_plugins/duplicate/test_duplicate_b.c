/* test.duplicate, copy B: two libraries claim the same name; the first found is used and the
 * other is reported as a problem. The titles tell the tests which one won. */
#include "../test_plugin_support.h"

static const flashps_plugin_descriptor descriptor = TEST_PLUGIN_DESCRIPTOR(
    "test.duplicate", "Duplicate B (test)", "One of two plugins named test.duplicate", NULL, 0, test_copy_main);
TEST_PLUGIN_ENTRY(descriptor)
