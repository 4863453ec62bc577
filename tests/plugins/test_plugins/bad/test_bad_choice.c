/* Refused: a CHOICE parameter whose default "d" is not one of its choices "a|b|c". */
#include "../test_plugin_support.h"

static const flashps_parameter_spec parameters[] = {
    {sizeof(flashps_parameter_spec), "mode", "mode", NULL, FLASHPS_PARAMETER_CHOICE, 0, 0, 0, "d", "a|b|c"},
};
static const flashps_plugin_descriptor descriptor = TEST_PLUGIN_DESCRIPTOR(
    "test.bad-choice", "Bad choice (test)", "A choice whose default is not a choice", parameters, 1,
    test_copy_main);
TEST_PLUGIN_ENTRY(descriptor)
