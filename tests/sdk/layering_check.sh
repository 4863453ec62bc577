#!/usr/bin/env bash
# sdk/layering.cmake passes the SDK's real folders and refuses a lower layer including a higher
# one, a folder beside it, the public headers outside api/, and a folder it does not know.
# Usage: layering_check.sh PROJECT_SOURCE_DIR
set -uo pipefail
source_dir="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

check() { cmake -DSOURCE_ROOT="$1" -P "$source_dir/sdk/layering.cmake" 2>&1; }

if output=$(check "$source_dir/sdk/src"); then echo "ok: the SDK's folders follow the layering"; else
  echo "FAIL: the SDK's own folders are refused: $output"; failures=$((failures + 1)); fi

# expect_refused FOLDER/FILE INCLUDE EXPECTED: a tree of real layer folders where FILE includes INCLUDE.
expect_refused() {
  local file=$1 include=$2 expected=$3 tree="$work/tree$RANDOM"
  mkdir -p "$tree"/{core,engine,models,pipeline,serve,serve_tools,api}
  mkdir -p "$tree/$(dirname "$file")"
  printf '#pragma once\n#include "core/error.h"\n#include <ATen/ATen.h>\n#include %s\n' "$include" >"$tree/$file"
  if output=$(check "$tree"); then
    echo "FAIL: $file including $include was accepted"; failures=$((failures + 1))
  elif tr -s ' \n' '  ' <<<"$output" | grep -qF "$expected"; then
    echo "ok: $file including $include refused"
  else
    echo "FAIL: $file including $include refused without \"$expected\": $output"; failures=$((failures + 1))
  fi
}
expect_refused core/a.h '"engine/capture.h"' 'sdk/src/core/a.h: #include "engine/capture.h" (core/ may use: )'
expect_refused models/b.cpp '"pipeline/edit_job.h"' 'sdk/src/models/b.cpp: #include "pipeline/edit_job.h" (models/ may use: core;engine;schedulers)'
expect_refused serve/c.cpp '"models/flux/flux_config.h"' 'serve/ may use: core;engine;pipeline'
expect_refused serve/f.cpp '"serve_tools/simulator.h"' 'sdk/src/serve/f.cpp: #include "serve_tools/simulator.h" (serve/ may use: core;engine;pipeline)'
expect_refused pipeline/d.h '<flashps/flashps.h>' 'sdk/src/pipeline/d.h: #include <flashps/flashps.h>'
expect_refused gadgets/e.h '"core/error.h"' 'sdk/src/gadgets/: a folder with no place in the layering'

[ $failures -eq 0 ] && echo "layering check passes" || exit 1
