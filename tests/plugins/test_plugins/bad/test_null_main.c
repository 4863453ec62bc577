/* Refused: a descriptor without a main function. */
#include "../test_plugin_support.h"

static const flashps_plugin_descriptor descriptor =
    TEST_PLUGIN_DESCRIPTOR("test.null-main", "Null main (test)", "A descriptor whose main is NULL", NULL, 0, NULL);
TEST_PLUGIN_ENTRY(descriptor)
