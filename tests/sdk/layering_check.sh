#!/usr/bin/env bash
# sdk/layering.cmake, the one include check of the project, passes the real tree and refuses a
# planted violation of each rule: the SDK's folder table, the NEVER rules (engine never reaches
# models, pipeline or cache; serve never reaches models or the store; directly or through another
# folder's headers, and not by a table row either), front ends and the public headers on the
# public API alone, and folders without a row.
# Usage: layering_check.sh PROJECT_SOURCE_DIR
set -uo pipefail
source_dir="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

check() { cmake -DPROJECT_ROOT="$1" -P "$1/sdk/layering.cmake" 2>&1; }

if output=$(check "$source_dir"); then echo "ok: the project's sources follow the include rules"; else
  echo "FAIL: the project's own sources are refused: $output"; failures=$((failures + 1)); fi

# docs/ARCHITECTURE.md's tables say what sdk/layering.cmake says (read as the script prints them).
doc_rules() {
  awk '
    function trim(t) { gsub(/^[ \t]+|[ \t]+$/, "", t); return t }
    /^\| folder \| may include \|/ { kind = "uses"; next }
    /^\| folder \| never reaches \|/ { kind = "never"; next }
    /^\| front end \| libraries \|/ { kind = "front"; next }
    /^\| ---/ { next }
    !/^\|/ { kind = ""; next }
    kind != "" {
      split($0, cell, "|")
      value = trim(cell[3])
      if (value == "(nothing)" || value == "(none)") value = ""
      sub(/; the public headers$/, ", flashps", value)
      if (kind == "front") { print "front " trim(cell[2]) ": " value "; " trim(cell[4]); next }
      m = split(cell[2], folders, ",")
      for (i = 1; i <= m; i++) print kind " " trim(folders[i]) ": " value
    }' "$source_dir/docs/ARCHITECTURE.md" | sed 's/ *$//' | sort
}
table_rules() { cmake -DPRINT_RULES=ON -P "$source_dir/sdk/layering.cmake" 2>&1 | sed 's/ *$//' | sort; }
if differences=$(diff <(doc_rules) <(table_rules)); then
  echo "ok: docs/ARCHITECTURE.md's tables match sdk/layering.cmake ($(table_rules | wc -l) rows)"
else
  echo "FAIL: docs/ARCHITECTURE.md's tables (<) differ from sdk/layering.cmake (>):"
  echo "$differences"; failures=$((failures + 1))
fi

# A copy of everything the check reads, where one violation at a time is planted.
tree="$work/tree"
mkdir -p "$tree/sdk"
cp -r "$source_dir/sdk/src" "$source_dir/sdk/include" "$source_dir/sdk/layering.cmake" "$tree/sdk/"
cp -r "$source_dir/cli" "$source_dir/desktop_app" "$source_dir/plugins" "$tree/"
if output=$(check "$tree"); then echo "ok: the copy passes before anything is planted"; else
  echo "FAIL: the copy is refused as it is: $output"; failures=$((failures + 1)); fi

# expect_refused WHAT EXPECTED: runs the check on the tree as planted; it must fail, and its
# message must contain EXPECTED (compared on one line: CMake wraps long messages).
expect_refused() {
  local what=$1 expected=$2 output
  if output=$(check "$tree"); then
    echo "FAIL: $what was accepted"; failures=$((failures + 1))
  elif tr -s ' \n' '  ' <<<"$output" | grep -qF -- "$expected"; then
    echo "ok: $what refused"
  else
    echo "FAIL: $what refused without \"$expected\": $output"; failures=$((failures + 1))
  fi
}

# include_refused FILE INCLUDE EXPECTED: FILE (from the tree's root; made if missing) gains the
# line "#include INCLUDE", the check must refuse it, and FILE is restored.
include_refused() {
  local file=$1 include=$2 expected=$3
  local existed=false
  [ -e "$tree/$file" ] && { existed=true; cp "$tree/$file" "$work/saved"; }
  mkdir -p "$(dirname "$tree/$file")"
  printf '#include %s\n' "$include" >>"$tree/$file"
  expect_refused "$file including $include" "$expected"
  if $existed; then cp "$work/saved" "$tree/$file"; else rm -f "$tree/$file"; fi
}

# The SDK's folder table.
include_refused sdk/src/core/diagnostics/error.h '"engine/capture.h"' \
  'sdk/src/core/diagnostics/error.h: #include "engine/capture.h" (core/ may use: nothing)'
include_refused sdk/src/models/loading/weights.h '"pipeline/edit_job.h"' \
  'sdk/src/models/loading/weights.h: #include "pipeline/edit_job.h" (models/ may use: core, engine, schedulers)'
include_refused sdk/src/serve/engine.h '"serve_tools/simulator.h"' \
  'sdk/src/serve/engine.h: #include "serve_tools/simulator.h" (serve/ may use: core, engine, pipeline)'
include_refused sdk/src/pipeline/edit_job.h '<flashps/flashps.h>' \
  'sdk/src/pipeline/edit_job.h: #include <flashps/flashps.h> (pipeline/ may use:'
include_refused sdk/src/models/loading/weights.h '"../pipeline/edit_job.h"' \
  'sdk/src/models/loading/weights.h: #include "../pipeline/edit_job.h" (a path out of its folder;'
include_refused sdk/src/gadgets/e.h '"core/diagnostics/error.h"' 'sdk/src/gadgets/: a folder with no place in the layering'

# engine never reaches models, pipeline or cache: directly, through another folder, by the table.
for include in '"models/flux/flux_config.h"' '"pipeline/edit_job.h"' '"cache/activation_store.h"'; do
  include_refused sdk/src/engine/planner.h "$include" \
    "sdk/src/engine/planner.h: #include $include (engine/ never reaches models, pipeline, cache; engine/ may use: core)"
done
include_refused sdk/src/core/diagnostics/error.h '"models/flux/flux_config.h"' \
  '-> core/diagnostics/error.h -> models/flux/flux_config.h (engine/ never reaches models, pipeline, cache, not even through another folder)'
cp "$tree/sdk/layering.cmake" "$work/saved_table"
sed -i 's/^set(FLASHPS_LAYER_USES_engine "core")$/set(FLASHPS_LAYER_USES_engine "core;models")/' "$tree/sdk/layering.cmake"
expect_refused "a table row letting engine use models" \
  'sdk/layering.cmake: engine/ may use models/, which it must never reach'
cp "$work/saved_table" "$tree/sdk/layering.cmake"

# serve never reaches models or the store (cache/): directly or through pipeline's headers.
for include in '"models/flux/flux_config.h"' '"cache/activation_store.h"'; do
  include_refused sdk/src/serve/engine.h "$include" \
    "sdk/src/serve/engine.h: #include $include (serve/ never reaches models, cache; serve/ may use: core, engine, pipeline)"
done
include_refused sdk/src/pipeline/edit_job.h '"models/flux/flux_config.h"' \
  'pipeline/edit_job.h -> models/flux/flux_config.h (serve/ never reaches models, cache, not even through another folder)'

# http, the front ends and the public headers: only the public API.
include_refused sdk/src/http/base64.h '"core/image/image.h"' \
  'sdk/src/http/base64.h: #include "core/image/image.h" (sdk/src/http/ may use only the public API <flashps/...>'
include_refused sdk/src/http/base64.h '"api/handles.h"' \
  'sdk/src/http/base64.h: #include "api/handles.h" (sdk/src/http/ may use only the public API'
include_refused sdk/src/http/base64.h '<torch/torch.h>' \
  'sdk/src/http/base64.h: #include <torch/torch.h> (sdk/src/http/ may use only the public API <flashps/...>, standard headers, its own files and the libraries: nlohmann)'
for include in '"core/image/image.h"' '<torch/torch.h>' '"../sdk/src/core/diagnostics/error.h"' '<cache/activation_store.h>' '"no_such_file.h"'; do
  include_refused cli/byte_size.h "$include" "cli/byte_size.h: #include $include ("
done
include_refused cli/commands/edit.cpp '"engine/planner.h"' \
  'cli/commands/edit.cpp: #include "engine/planner.h" (cli/ may use only the public API <flashps/...>, standard headers, its own files and the libraries: CLI, nlohmann)'
include_refused desktop_app/src/document.h '"engine/planner.h"' 'desktop_app/src/document.h: #include "engine/planner.h" (desktop_app/src/ may use only the public API'
include_refused desktop_app/src/document.h '"paint_test_support.h"' \
  'desktop_app/src/document.h: #include "paint_test_support.h" (a quoted include names a file of its own;'
include_refused plugins/host/plugin_paths.h '"serve/engine.h"' 'plugins/host/plugin_paths.h: #include "serve/engine.h" (plugins/host/ may use only the public API'
include_refused plugins/filters/support/filter_support.h '<ATen/ATen.h>' \
  'plugins/filters/support/filter_support.h: #include <ATen/ATen.h> (plugins/filters/ may use only the public API <flashps/...>, standard headers, its own files and the libraries: none)'
include_refused plugins/gimp/gimp_pixels.h '"core/diagnostics/error.h"' 'plugins/gimp/gimp_pixels.h: #include "core/diagnostics/error.h" (plugins/gimp/ may use only the public API'
include_refused plugins/gimp_common/gimp_fill.h '<libgimp/gimp.h>' 'plugins/gimp_common/gimp_fill.h: #include <libgimp/gimp.h> (plugins/gimp_common/ may use only the public API'
include_refused sdk/include/flashps/mask.h '"core/diagnostics/error.h"' 'sdk/include/flashps/mask.h: #include "core/diagnostics/error.h" (sdk/include/ may use only the public API'
include_refused plugins/extra/a.c '<flashps/plugin.h>' 'plugins/extra/: a folder with no place in the layering'
mv "$tree/plugins/gimp" "$work/gimp"
expect_refused "a front end's folder gone" 'plugins/gimp/: a front end in sdk/layering.cmake that is not there'
mv "$work/gimp" "$tree/plugins/gimp"

if output=$(check "$tree"); then echo "ok: the copy passes again once every plant is removed"; else
  echo "FAIL: a plant was left behind: $output"; failures=$((failures + 1)); fi
[ $failures -eq 0 ] && echo "layering check passes" || exit 1
