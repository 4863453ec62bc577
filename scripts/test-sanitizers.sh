#!/usr/bin/env bash
# The Catch2 suite under AddressSanitizer, LeakSanitizer and UndefinedBehaviorSanitizer: a
# separate build of the SDK and the tests in build-asan (-DFLASHPS_SANITIZE=ON). Slow tests run
# in their quick form (FLASHPS_QUICK_TESTS). With --fast (what CI runs, .ci/run) the tests tagged
# [slow] are left out; every other test, a new one included, runs. [slow] marks a long test (over
# about 25 s in a normal build on 2 cores) whose code faster tests also reach (benchmarks/README.md,
# "Checks that keep running"). Without --fast, the whole suite (also run by scripts/test.sh with
# FLASHPS_SANITIZERS=1).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ccache-env.sh
tests=('~[.]')  # hidden tests are helpers that other tests start
if [ "${1:-}" = --fast ]; then
  tests=('~[.]~[slow]')
elif [ $# -gt 0 ]; then
  echo "usage: $0 [--fast]" >&2
  exit 2
fi
started=$(date +%s)
build_dir=${FLASHPS_ASAN_BUILD_DIR:-build-asan}
if [ ! -f "$build_dir/build.ninja" ]; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLASHPS_SANITIZE=ON \
    -DFLASHPS_BUILD_CLI=OFF -DFLASHPS_BUILD_TOOLS=OFF
fi
cmake --build "$build_dir" -j "${FLASHPS_JOBS:-$(nproc)}" --target flashps_tests
built=$(date +%s)
export ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=0:check_initialization_order=1
export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export FLASHPS_QUICK_TESTS=1
export FLASHPS_THREADS=${FLASHPS_THREADS:-$(nproc)}
"$build_dir/tests/flashps_tests" "${tests[@]}"
echo "test-sanitizers.sh: the tests (${tests[*]}) passed under ASan/LSan/UBSan;" \
  "build $(( built - started )) s, run $(( $(date +%s) - built )) s"
