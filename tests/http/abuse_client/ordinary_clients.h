// The ordinary clients whose service the benchmark measures: options.clients threads, each
// sending one edit after another (options.route) and waiting for its image.
#pragma once
#include "abuse.h"
#include "edit_requests.h"
#include "tally.h"

namespace abuse {

// New requests start until `window_end` (or until `abort` is set); a request in flight then may
// still finish until `hard_end`, after which it counts as "unanswered_at_end". Returns when every
// thread has ended; outcomes and latencies go to `tally`.
void run_ordinary_clients(const Options& options, const Media& media, Clock::time_point window_end,
                          Clock::time_point hard_end, const std::atomic<bool>& abort, Tally& tally);

}  // namespace abuse
