/* Refused: two parameters with the key "x" (--param x=... would be ambiguous). */
#include "../test_plugin_support.h"

static const flashps_parameter_spec parameters[] = {
    TEST_INT_PARAMETER("x", 0, 10, 1),
    TEST_INT_PARAMETER("x", 0, 10, 2),
};
static const flashps_plugin_descriptor descriptor = TEST_PLUGIN_DESCRIPTOR(
    "test.duplicate-key", "Duplicate key (test)", "Two parameters named x", parameters, 2, test_copy_main);
TEST_PLUGIN_ENTRY(descriptor)
