/* Refused: an INT parameter whose minimum (10) is above its maximum (1). */
#include "../test_plugin_support.h"

static const flashps_parameter_spec parameters[] = {TEST_INT_PARAMETER("level", 10, 1, 5)};
static const flashps_plugin_descriptor descriptor = TEST_PLUGIN_DESCRIPTOR(
    "test.bad-schema-range", "Bad range (test)", "A parameter with minimum 10 and maximum 1", parameters, 1,
    test_copy_main);
TEST_PLUGIN_ENTRY(descriptor)
