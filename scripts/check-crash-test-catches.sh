#!/usr/bin/env bash
# Shows that the activation store's crash test catches a broken durability step. Builds the test
# suite (build-crash-check) with the store broken on purpose, one way at a time
# (-DFLASHPS_TEST_BREAK_DURABILITY, sdk/CMakeLists.txt; it exists only for this check):
#   skip_data_sync       the segment's fdatasync removed
#   skip_directory_sync  the segment directory's fsync removed
#   reorder_commit       the index row committed before the segment is flushed
# and expects the power-cut test to FAIL for each; then the store as shipped, where both the
# kill and the power-cut test must pass. The kill test alone is run beside for the record: a
# killed process keeps the page cache, so it cannot see a missing flush. Exits 0 when all of
# that held. Takes a few minutes with a warm ccache (the broken builds recompile two files).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ccache-env.sh
build_dir=${FLASHPS_CRASH_CHECK_BUILD_DIR:-build-crash-check}
logs="$build_dir/crash-check-logs"
kill_test='a writer killed at each durability step loses nothing committed and leaves no orphan'
power_cut_test='a power cut at each durability step loses nothing committed and leaves no orphan'
export FLASHPS_THREADS=${FLASHPS_THREADS:-2} FLASHPS_PROFILE=none

build_with() {
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLASHPS_BUILD_CLI=OFF \
    -DFLASHPS_BUILD_TOOLS=OFF -DFLASHPS_BUILD_DESKTOP=OFF -DFLASHPS_TEST_BREAK_DURABILITY="$1" >/dev/null
  cmake --build "$build_dir" -j "${FLASHPS_JOBS:-$(nproc)}" --target flashps_tests >/dev/null
  mkdir -p "$logs"
}

# Runs one test case; prints and returns "passed" or "failed" (its output goes to a log).
outcome() {
  local name=$1 log=$2
  if "$build_dir/tests/flashps_tests" "$name" >"$log" 2>&1; then echo passed; else echo failed; fi
}

problems=0
for broken in skip_data_sync skip_directory_sync reorder_commit; do
  build_with "$broken"
  power_cut=$(outcome "$power_cut_test" "$logs/$broken-power-cut.log")
  kill_only=$(outcome "$kill_test" "$logs/$broken-kill.log")
  failed_checks=$(grep -o '[0-9]* failed' "$logs/$broken-power-cut.log" | tail -1 || true)
  echo "check-crash-test-catches: store built with $broken: power-cut test $power_cut (${failed_checks:-no count}), kill test $kill_only"
  [ "$power_cut" = failed ] || { echo "  expected the power-cut test to fail: see $logs/$broken-power-cut.log"; problems=1; }
done
build_with ""
power_cut=$(outcome "$power_cut_test" "$logs/shipped-power-cut.log")
kill_only=$(outcome "$kill_test" "$logs/shipped-kill.log")
echo "check-crash-test-catches: store as shipped: power-cut test $power_cut, kill test $kill_only"
[ "$power_cut" = passed ] && [ "$kill_only" = passed ] || { echo "  expected both to pass: see $logs/"; problems=1; }
if [ "$problems" = 0 ]; then
  echo "check-crash-test-catches: the crash test catches each broken durability step"
fi
exit "$problems"
