/* test.scratch: takes `megabytes` of scratch memory from the memory suite, so that tests see the
 * run's memory budget refuse it ("scratch memory refused"); otherwise the result is the source. */
#include "../test_plugin_support.h"

#include <string.h>

static int32_t use_scratch(flashps_filter_record* record) {
  const size_t bytes = (size_t)record->suites->parameters->get_int(record->host, "megabytes") << 20;
  void* scratch = record->suites->memory->allocate(record->host, bytes);
  if (scratch == NULL) return test_fail(record, "scratch memory refused");
  memset(scratch, 0x5a, bytes); /* touch every page: the memory is really used */
  record->suites->memory->release(record->host, scratch);
  return test_copy_source(record);
}

static int32_t scratch_main(int32_t selector, flashps_filter_record* record) {
  if (selector == FLASHPS_SELECTOR_START) return use_scratch(record);
  return selector == FLASHPS_SELECTOR_ADVANCE ? FLASHPS_PLUGIN_DONE : FLASHPS_PLUGIN_OK;
}

static const flashps_parameter_spec parameters[] = {TEST_INT_PARAMETER("megabytes", 1, 4096, 16)};
static const flashps_plugin_descriptor descriptor = TEST_PLUGIN_DESCRIPTOR(
    "test.scratch", "Scratch memory (test)", "Uses megabytes of scratch memory", parameters, 1, scratch_main);
TEST_PLUGIN_ENTRY(descriptor)
