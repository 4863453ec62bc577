#!/usr/bin/env bash
# Builds FlashPS and runs the whole test suite (Catch2 through ctest), then the fuzz targets
# briefly. Fixture tests read ../shared/fixtures (or $FLASHPS_FIXTURES_DIR) and skip with a
# message when it is absent. The suite under AddressSanitizer/LeakSanitizer/UBSan is a second
# build (build-asan): CI (.ci/run) runs it after this script without the [slow] tests; the whole
# of it runs here with FLASHPS_SANITIZERS=1, or on its own as scripts/test-sanitizers.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
scripts/build.sh
export FLASHPS_THREADS=${FLASHPS_THREADS:-$(nproc)}
ctest --test-dir "${FLASHPS_BUILD_DIR:-build}" --output-on-failure -j 1
if [ "${FLASHPS_SANITIZERS:-0}" != 0 ]; then
  scripts/test-sanitizers.sh
fi
if command -v clang++ >/dev/null 2>&1; then
  scripts/run-fuzzers.sh "${FLASHPS_FUZZ_SECONDS:-15}"
else
  echo "test.sh: clang++ not found, fuzz targets not run (scripts/install-deps.sh installs it)"
fi
echo "test.sh: build + tests took $(( $(date +%s) - started )) s"
