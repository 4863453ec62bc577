/* Shared by the test plugins (C11): a descriptor of the tests' vendor and category, and small
 * image helpers. Each plugin's own file shows the one thing it tests. */
#ifndef FLASHPS_TEST_PLUGIN_SUPPORT_H
#define FLASHPS_TEST_PLUGIN_SUPPORT_H

#include <flashps/plugin.h>

#define TEST_PLUGIN_VENDOR "FlashPS tests"
#define TEST_PLUGIN_CATEGORY "Test"

/* A valid version-1 descriptor with no flags; a bad plugin spoils one field afterwards. */
#define TEST_PLUGIN_DESCRIPTOR(name, title, description, parameters, parameter_count, main)                   \
  {sizeof(flashps_plugin_descriptor), FLASHPS_PLUGIN_ABI_VERSION, name, title, "1.0", TEST_PLUGIN_VENDOR,       \
   TEST_PLUGIN_CATEGORY, description, 0, parameters, parameter_count, main}

#define TEST_INT_PARAMETER(key, minimum, maximum, default_number)                                               \
  {sizeof(flashps_parameter_spec), key, key, NULL, FLASHPS_PARAMETER_INT, minimum, maximum, default_number, NULL, \
   NULL}

/* The exported entry point, returning `descriptor`. */
#define TEST_PLUGIN_ENTRY(descriptor)                                                                        \
  FLASHPS_PLUGIN_EXPORT const flashps_plugin_descriptor* flashps_plugin_entry(uint32_t host_abi_version) { \
    (void)host_abi_version;                                                                                 \
    return &(descriptor);                                                                                   \
  }

/* set_error(reason), then FLASHPS_PLUGIN_ERROR. */
int32_t test_fail(const flashps_filter_record* record, const char* reason);

/* Makes one result holding a copy of the source. */
int32_t test_copy_source(flashps_filter_record* record);

/* A well-behaved main (START copies the source, ADVANCE is DONE) for plugins whose fault lies
 * elsewhere, or that crash before it runs. */
int32_t test_copy_main(int32_t selector, flashps_filter_record* record);

/* Inverts the RGB of rows [first_row, end_row) where selected (mask >= 128), or everywhere when
 * `selection` is empty; alpha is copied. */
void test_invert_rows(const flashps_image* source, const flashps_image* selection, flashps_image* result,
                      uint32_t first_row, uint32_t end_row);

#endif /* FLASHPS_TEST_PLUGIN_SUPPORT_H */
