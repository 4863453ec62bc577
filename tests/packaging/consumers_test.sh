#!/usr/bin/env bash
# The installed package works for outside programs. Installs the build tree into a temporary
# prefix, moves that prefix (the package must be relocatable), checks that no installed CMake or
# pkg-config file names a path of this machine, then builds and runs the installed consumer
# samples against it with find_package(FlashPS) and pkg-config, and the C one against
# libflashps.a (build_and_run_consumers.sh). Usage: consumers_test.sh BUILD_DIR
set -euo pipefail
build_dir=$(cd "$1" && pwd)
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "--- install into a temporary prefix, then move it"
cmake --install "$build_dir" --prefix "$work/installed" >"$work/install.log"
mv "$work/installed" "$work/prefix"
prefix="$work/prefix"

echo "--- no machine paths in lib/cmake, lib/pkgconfig"
machine_paths="/usr/lib|/usr/include|$build_dir|$source_dir|$work/installed"
if grep -rnE "$machine_paths" "$prefix"/lib*/cmake "$prefix"/lib*/pkgconfig; then
  echo "FAIL: installed package files name machine paths (above)"
  exit 1
fi

FLASHPS_CONSUMERS_STATIC=1 bash "$(dirname "$0")/build_and_run_consumers.sh" \
  "$prefix/share/flashps/samples" "$work/consumers" "$prefix/share/flashps/models" "$prefix"
echo "packaging.consumers: passed"
