#!/usr/bin/env bash
# cli/public_api_only.cmake (run when the CLI is configured) passes the CLI's real sources and
# stops with the file, the include and the reason on a source that includes an SDK internal.
# Usage: public_api_check.sh PROJECT_SOURCE_DIR
set -uo pipefail
source_dir="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# check SOURCE...: runs the check in CMake script mode on the given sources.
check() {
  local sources
  sources=$(IFS=';'; echo "$*")
  cat >"$work/driver.cmake" <<CMAKE
set(PROJECT_SOURCE_DIR "$source_dir")
include("$source_dir/cli/public_api_only.cmake")
flashps_check_public_includes("$sources" "$source_dir/cli")
CMAKE
  cmake -P "$work/driver.cmake" 2>&1
}

failures=0
mapfile -t cli_sources < <(find "$source_dir/cli" -name '*.cpp' -o -name '*.h')
if output=$(check "${cli_sources[@]}"); then echo "ok: the CLI's ${#cli_sources[@]} files pass"; else
  echo "FAIL: the CLI's own sources are refused: $output"; failures=$((failures + 1)); fi

for include in '"core/image.h"' '<torch/torch.h>' '"../sdk/src/core/error.h"' '<cache/activation_store.h>'; do
  mkdir -p "$work/cli"
  printf '#include <flashps/flashps.hpp>\n#include %s\nint x;\n' "$include" >"$work/cli/bad.cpp"
  if output=$(check "$work/cli/bad.cpp"); then
    echo "FAIL: #include $include was accepted"; failures=$((failures + 1))
  # CMake wraps messages: compare on one line.
  elif tr -s ' \n' '  ' <<<"$output" | grep -qF "bad.cpp: #include $include: the CLI may use only the public API"; then
    echo "ok: #include $include refused"
  else
    echo "FAIL: #include $include refused without the expected message: $output"; failures=$((failures + 1))
  fi
done

[ $failures -eq 0 ] && echo "public API check passes" || exit 1
