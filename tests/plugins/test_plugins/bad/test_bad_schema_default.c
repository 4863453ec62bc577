/* Refused: an INT parameter whose default (50) lies outside its range 0..10. */
#include "../test_plugin_support.h"

static const flashps_parameter_spec parameters[] = {TEST_INT_PARAMETER("level", 0, 10, 50)};
static const flashps_plugin_descriptor descriptor = TEST_PLUGIN_DESCRIPTOR(
    "test.bad-schema-default", "Bad default (test)", "A parameter whose default 50 is outside 0..10", parameters,
    1, test_copy_main);
TEST_PLUGIN_ENTRY(descriptor)
