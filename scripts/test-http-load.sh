#!/usr/bin/env bash
# The full load-and-fault test of `flashps serve` (tests/http/http_load_faults.sh): 500 edits from
# 32 concurrent clients with random cancels, disconnects and deadlines; RSS after a second round
# within 10% of the first; SIGTERM drain; SIGKILL during load, then restart and `cache verify`.
# About 5 minutes on 2 cores, outside CI's budget (ctest runs the quick form, http.load_faults_quick).
# With FLASHPS_SANITIZE_BUILD=<dir> it runs against an ASan/LSan build of the CLI configured there
# (cmake -S . -B <dir> -DFLASHPS_SANITIZE=ON -DFLASHPS_BUILD_CLI=ON), failing on any report.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ccache-env.sh
build_dir=${FLASHPS_SANITIZE_BUILD:-build}
cmake --build "$build_dir" -j "${FLASHPS_JOBS:-$(nproc)}" --target flashps_cli flashps_http_load
if [ -n "${FLASHPS_SANITIZE_BUILD:-}" ]; then export FLASHPS_ASAN=1; fi
export FLASHPS_THREADS=${FLASHPS_THREADS:-$(nproc)}
export FLASHPS_LOAD_REQUESTS=${FLASHPS_LOAD_REQUESTS:-500} FLASHPS_LOAD_CLIENTS=${FLASHPS_LOAD_CLIENTS:-32}
bash tests/http/http_load_faults.sh "$build_dir/cli/flashps" "$build_dir/tests/flashps_http_load"
