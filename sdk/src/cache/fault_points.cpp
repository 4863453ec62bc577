#include "cache/fault_points.h"

#include <atomic>

namespace flashps::cache {
namespace {

std::atomic<FaultHook> fault_hook{nullptr};

}  // namespace

const char* fault_point_name(FaultPoint point) {
  switch (point) {
    case FaultPoint::segment_created: return "segment_created";
    case FaultPoint::segment_written: return "segment_written";
    case FaultPoint::segment_flushed: return "segment_flushed";
    case FaultPoint::index_transaction_begun: return "index_transaction_begun";
    case FaultPoint::index_rows_written: return "index_rows_written";
    case FaultPoint::index_committed: return "index_committed";
    case FaultPoint::segment_append: return "segment_append";
    case FaultPoint::segment_read: return "segment_read";
  }
  return "unknown";
}

void set_fault_hook(FaultHook hook) { fault_hook = hook; }

int reach_fault_point(FaultPoint point) {
  const FaultHook hook = fault_hook.load();
  return hook ? hook(point) : 0;
}

}  // namespace flashps::cache
