// The activation store's durability steps, named so that crash-safety tests can stop a writer at
// each one (tests/cache/test_store_faults.cpp). No program sets a hook: it is an internal C++
// function, not part of the public API, and with none set reaching a point does nothing.
#pragma once

namespace flashps::cache {

enum class FaultPoint {
  segment_created,          // the segment file exists under its final name, locked, empty
  segment_written,          // every entry appended, not yet flushed
  segment_flushed,          // fdatasync and the directory entry done
  index_transaction_begun,  // inside BEGIN, nothing inserted
  index_rows_written,       // the capture and entry rows inserted, not committed
  index_committed,          // the transaction committed, the segment not yet handed to the index
};
constexpr int kFaultPointCount = 6;
const char* fault_point_name(FaultPoint point);

using FaultHook = void (*)(FaultPoint point);
void set_fault_hook(FaultHook hook);  // nullptr: none (the default)
void reach_fault_point(FaultPoint point);

}  // namespace flashps::cache
