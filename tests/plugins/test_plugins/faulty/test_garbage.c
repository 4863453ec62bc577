/* test.garbage: in START writes a frame claiming 0xffffffff bytes and then 4096 pseudo-random
 * bytes onto the runner's message channel (fd 3), then carries on as if nothing happened. The
 * host must stop the runner as a protocol failure instead of trusting the length. */
#define _POSIX_C_SOURCE 200809L
#include "../test_plugin_support.h"

#include <sys/stat.h>
#include <unistd.h>

enum { RUNNER_CHANNEL_FD = 3, GARBAGE_BYTES = 4096 };

static void write_garbage(void) {
  struct stat channel;
  /* Only onto a pipe or socket: run in-process, fd 3 may be one of the host's files. */
  if (fstat(RUNNER_CHANNEL_FD, &channel) != 0 || !(S_ISFIFO(channel.st_mode) || S_ISSOCK(channel.st_mode)))
    return;
  unsigned char garbage[4 + GARBAGE_BYTES];
  uint32_t state = 0x9e3779b9u; /* xorshift32: the same garbage every run */
  for (size_t i = 0; i < sizeof garbage; ++i) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    garbage[i] = i < 4 ? 0xff : (unsigned char)state; /* the length prefix: 0xffffffff */
  }
  const ssize_t written = write(RUNNER_CHANNEL_FD, garbage, sizeof garbage);
  (void)written; /* whatever the host does with it is what the test checks */
}

static int32_t garbage_main(int32_t selector, flashps_filter_record* record) {
  if (selector == FLASHPS_SELECTOR_START) {
    write_garbage();
    return test_copy_source(record);
  }
  return selector == FLASHPS_SELECTOR_ADVANCE ? FLASHPS_PLUGIN_DONE : FLASHPS_PLUGIN_OK;
}

static const flashps_plugin_descriptor descriptor = TEST_PLUGIN_DESCRIPTOR(
    "test.garbage", "Garbage (test)", "Writes garbage onto the runner's channel", NULL, 0, garbage_main);
TEST_PLUGIN_ENTRY(descriptor)
