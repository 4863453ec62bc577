#!/usr/bin/env bash
# `flashps plugin ls | info | run` as a user runs them: the four first-party filters and the
# sample are listed, a run writes its results and the second run of one image hits the template
# cache, variations become NAME-1.png ..., and a plugin that crashes, hangs or gets a bad
# parameter ends with one clear line and a non-zero exit, never a crash of flashps.
# Usage: cli_plugins.sh PATH_TO_FLASHPS BUILD_DIR
set -uo pipefail
flashps="$1"
build=$(cd "$2" && pwd)
samples="$(cd "$(dirname "$0")/../../samples" && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
export FLASHPS_CACHE_DIR="$work/store"
image="$samples/images/fig.jpg"
mask="$samples/masks/fig.png"

export FLASHPS_PLUGIN_PATH="$build/samples/plugin_sample"
listing=$("$flashps" plugin ls 2>&1)
for expected in "^flashps.generative-fill .* in-process" "^flashps.remove-object " "^flashps.expand-canvas " \
                "^flashps.variations " "^sample.posterize-selection .* isolated" "^5 plugin"; do
  grep -qE "$expected" <<<"$listing" && ok "ls shows /$expected/" || fail "ls lacks /$expected/: $listing"
done
"$flashps" plugin ls --json | grep -q '"name": "flashps.variations"' && ok "ls --json" || fail "ls --json"
"$flashps" plugin info flashps.generative-fill | grep -qE "steps .*\[0\.\.100\]" && ok "info lists parameters" ||
  fail "info: $("$flashps" plugin info flashps.generative-fill 2>&1)"

first=$("$flashps" plugin run flashps.generative-fill --image "$image" --mask "$mask" --param steps=2 \
        --out "$work/fill.png" 2>&1)
grep -q "no cache hit" <<<"$first" && [ -s "$work/fill.png" ] && ok "first fill" || fail "first fill: $first"
second=$("$flashps" plugin run flashps.generative-fill --image "$image" --mask "$mask" --param steps=2 \
         --param seed=9 --out "$work/fill2.png" 2>&1)
grep -q "^cache hit" <<<"$second" && ok "second fill hits the template cache" || fail "second fill: $second"
"$flashps" plugin run flashps.variations --image "$image" --mask "$mask" --param steps=2 --param count=2 \
  --out "$work/var.png" --quiet >/dev/null 2>&1
[ -s "$work/var-1.png" ] && [ -s "$work/var-2.png" ] && ok "variations write var-1, var-2" || fail "variations"
"$flashps" plugin run sample.posterize-selection --image "$image" --mask "$mask" --param levels=2 \
  --out "$work/poster.png" --quiet >/dev/null 2>&1 && [ -s "$work/poster.png" ] && ok "the sample runs isolated" ||
  fail "the sample plugin"

# Failures: one line each, exit 1 (2 for a request the plugin cannot take), flashps intact.
expect() {  # description exit-code text -- args
  local description="$1" code="$2" text="$3"
  shift 4
  local output status
  output=$("$flashps" "$@" 2>&1 >/dev/null)
  status=$?
  if [ $status -ne "$code" ] || ! grep -q -- "$text" <<<"$output"; then
    fail "$description: exit $status, output: $output"
  elif [ $status -ge 128 ]; then
    fail "$description: flashps itself died (exit $status)"
  else
    ok "$description"
  fi
}
export FLASHPS_PLUGIN_PATH="$build/tests/test_plugins/faulty"
expect "a segfaulting plugin" 1 "crashed while running: its runner was killed by SIGSEGV" -- \
  plugin run test.segfault --image "$image" --out "$work/x.png"
expect "a hanging plugin" 1 "stopped responding" -- \
  plugin run test.hang --image "$image" --out "$work/x.png" --timeout 2
expect "a bad parameter" 2 "parameter steps: 500 is outside 0..100" -- \
  plugin run flashps.generative-fill --image "$image" --mask "$mask" --param steps=500 --out "$work/x.png"
expect "no selection" 2 "needs a selection" -- \
  plugin run flashps.generative-fill --image "$image" --out "$work/x.png"
expect "an unknown plugin" 2 "no plugin is called nothing.here" -- \
  plugin run nothing.here --image "$image" --out "$work/x.png"

[ "$failures" -eq 0 ] && echo "cli_plugins: all passed" || echo "cli_plugins: $failures failure(s)"
[ "$failures" -eq 0 ]
