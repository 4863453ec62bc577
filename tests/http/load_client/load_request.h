// One request of the load, of a kind picked from the run's seed, followed to its end.
#pragma once
#include "load_run.h"

namespace load_client {

// Takes request numbers from the run's counter until none are left.
void client_thread(Run& run);

}  // namespace load_client
