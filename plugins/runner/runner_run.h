// The runner's --run mode: one run message in, progress, results in shared memory and a finished
// message out.
#ifndef FLASHPS_PLUGINS_RUNNER_RUN_H
#define FLASHPS_PLUGINS_RUNNER_RUN_H

#include "runner_channel.h"

namespace flashps::plugins {

int run_from_host(RunnerChannel& channel);

}  // namespace flashps::plugins

#endif
