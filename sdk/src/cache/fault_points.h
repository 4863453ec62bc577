// The activation store's durability steps and disk I/O, named so that crash-safety tests can stop
// a writer at each step or fail a write or read (tests/cache/test_store_faults.cpp). No program
// sets a hook: it is an internal C++ function, not part of the public API, and with none set
// reaching a point does nothing.
#pragma once

namespace flashps::cache {

enum class FaultPoint {
  segment_created,          // the segment file exists under its final name, locked, empty
  segment_written,          // every entry appended, not yet flushed
  segment_flushed,          // fdatasync and the directory entry done
  index_transaction_begun,  // inside BEGIN, nothing inserted
  index_rows_written,       // the capture and entry rows inserted, not committed
  index_committed,          // the transaction committed, the segment not yet handed to the index
  segment_append,           // before each write of entry bytes (I/O: may fail)
  segment_read,             // before each read of entry bytes (I/O: may fail)
};
constexpr int kDurabilityStepCount = 6;  // the points before segment_append
const char* fault_point_name(FaultPoint point);

// Returns 0, or an errno that an I/O point then fails with as if its system call had (the
// store's own error path runs); the durability steps ignore it. A hook may also end the process.
using FaultHook = int (*)(FaultPoint point);
void set_fault_hook(FaultHook hook);  // nullptr: none (the default)
int reach_fault_point(FaultPoint point);

}  // namespace flashps::cache
