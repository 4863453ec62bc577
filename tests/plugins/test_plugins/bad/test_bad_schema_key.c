/* Refused: the parameter key "Bad Key" is not [a-z][a-z0-9_]* (it could not be --param key=value). */
#include "../test_plugin_support.h"

static const flashps_parameter_spec parameters[] = {TEST_INT_PARAMETER("Bad Key", 0, 10, 5)};
static const flashps_plugin_descriptor descriptor = TEST_PLUGIN_DESCRIPTOR(
    "test.bad-schema-key", "Bad key (test)", "A parameter key with a capital and a space", parameters, 1,
    test_copy_main);
TEST_PLUGIN_ENTRY(descriptor)
