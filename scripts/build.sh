#!/usr/bin/env bash
# Configures and builds FlashPS (Release, Ninja, ccache) into ./build. Extra arguments go to
# cmake's configure step, e.g. -DCMAKE_PREFIX_PATH=... for a LibTorch 2.x/CUDA build.
# FLASHPS_TARGETS (space-separated) builds only those targets and what they need, e.g.
# FLASHPS_TARGETS=flashps_cli (the library and `flashps`: what quickstart.sh needs); default all.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ccache-env.sh
build_dir=${FLASHPS_BUILD_DIR:-build}
jobs=${FLASHPS_JOBS:-$(nproc)}
if [ ! -f "$build_dir/build.ninja" ] || [ $# -gt 0 ]; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
fi
targets=()
for target in ${FLASHPS_TARGETS:-}; do targets+=(--target "$target"); done
cmake --build "$build_dir" -j "$jobs" "${targets[@]}"
