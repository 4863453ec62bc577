/* test.leak: allocates and fills 64 MB blocks in ADVANCE forever, never freeing them, and like a
 * careless plugin writes through malloc's NULL once memory runs out: the runner's memory limit
 * must end it (as out of memory), not the machine's. */
#include "../test_plugin_support.h"

#include <stdlib.h>
#include <string.h>

enum { BLOCK_BYTES = 64 << 20 };

static void* volatile last_block; /* the blocks escape here, so the allocations are kept */

static int32_t leak_main(int32_t selector, flashps_filter_record* record) {
  (void)record;
  if (selector != FLASHPS_SELECTOR_ADVANCE) return FLASHPS_PLUGIN_OK;
  for (;;) {
    unsigned char* volatile block = malloc(BLOCK_BYTES);
    memset(block, 0xa5, BLOCK_BYTES); /* NULL once out of memory: the crash is intended */
    last_block = block;
  }
}

static const flashps_plugin_descriptor descriptor = TEST_PLUGIN_DESCRIPTOR(
    "test.leak", "Leak (test)", "Allocates 64 MB blocks until memory runs out", NULL, 0, leak_main);
TEST_PLUGIN_ENTRY(descriptor)
