/* Refused: asks for plugin ABI version 2, newer than any host of version 1. */
#include "../test_plugin_support.h"

static const flashps_plugin_descriptor descriptor = {
    sizeof(flashps_plugin_descriptor), FLASHPS_PLUGIN_ABI_VERSION + 1, "test.future-abi", "Future ABI (test)", "1.0",
    TEST_PLUGIN_VENDOR, TEST_PLUGIN_CATEGORY, "Built for plugin ABI version 2", 0, NULL, 0, test_copy_main};
TEST_PLUGIN_ENTRY(descriptor)
