#!/usr/bin/env bash
# The GIMP plug-in in the real GIMP 2.10, headless (gimp-console): installs it with
# scripts/integrate-gimp.sh into a fresh GIMP profile, fills a rectangular selection of a sample
# photo twice (seed 1, then seed 2) and checks that the first fill captures the template (cache-hit
# 0) and the second replays it (1); that the saved result changed inside the selection and nowhere
# else; that the capture is in the store the CLI reads; and the messages of refused calls.
#
#   tests/integrations/gimp_test.sh FLASHPS_BUILD_DIR
#   tests/integrations/gimp_test.sh --installed   the packages' files: the plug-in in GIMP's system
#                                                 folder, libflashps-dev, flashps on PATH
# Exit 77 (skipped) without GIMP or without the plug-in built. FLASHPS_GIMP_PLUGIN names another
# plug-in binary than FLASHPS_BUILD_DIR/lib/flashps/gimp/flashps-generative-fill.
set -euo pipefail

repo="$(cd "$(dirname "$0")/../.." && pwd)"
if [[ "${1:-}" == --installed ]]; then
  build="" plugin=/usr/lib/gimp/2.0/plug-ins/flashps-generative-fill/flashps-generative-fill
else
  build="$(cd "${1:?usage: $0 FLASHPS_BUILD_DIR | --installed}" && pwd)"
  plugin="${FLASHPS_GIMP_PLUGIN:-$build/lib/flashps/gimp/flashps-generative-fill}"
fi

if ! command -v gimp >/dev/null || ! command -v gimp-console-2.10 >/dev/null; then
  echo "SKIP: GIMP 2.10 is not installed (needs gimp and gimp-console-2.10; Debian: apt install gimp)"
  exit 77
fi
if [[ ! -x "$plugin" ]]; then
  echo "SKIP: $plugin was not built (configure with libgimp2.0-dev installed)"
  exit 77
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; echo "--- GIMP's output:" >&2; cat "$work/gimp.log" >&2 2>/dev/null || true; exit 1; }

# A fresh GIMP profile and an empty activation store, both thrown away at the end.
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" FLASHPS_CACHE_DIR="$work/store"
unset GIMP2_DIRECTORY
mkdir -p "$XDG_CONFIG_HOME/GIMP/2.10/gradients" # -d loads no data, and GIMP then complains of it
sdk_flags=()  # installed: GIMP finds the plug-in itself, libflashps is the system's
if [[ -n "$build" ]]; then
  "$repo/scripts/integrate-gimp.sh" "$plugin"
  sdk_flags=(-I "$repo/sdk/include" -L "$build/sdk" -Wl,-rpath,"$build/sdk")
fi

"${CC:-cc}" -O2 -o "$work/image_region_diff" "$repo/tests/integrations/image_region_diff.c" "${sdk_flags[@]}" -lflashps
cp "$repo/samples/images/fig.jpg" "$work/in.jpg"
cd "$work"

# The selection: x y width height (in the 512x512 photo).
rect=(160 192 160 128)
cat > fill.scm <<SCHEME
(define (say . parts) (gimp-message (apply string-append "flashps-test: " parts)))
(let* ((image (car (gimp-file-load RUN-NONINTERACTIVE "in.jpg" "in.jpg")))
       (layer (car (gimp-image-get-active-layer image))))
  (gimp-file-save RUN-NONINTERACTIVE image layer "before.png" "before.png")
  (gimp-image-select-rectangle image CHANNEL-OP-REPLACE ${rect[*]})
  (let ((first (plug-in-flashps-generative-fill RUN-NONINTERACTIVE image layer "a fig" 1 2 1.0)))
    (say "call 1 cache-hit " (number->string (car first)) " seconds " (number->string (cadr first))))
  (let ((second (plug-in-flashps-generative-fill RUN-NONINTERACTIVE image layer "a fig" 2 2 1.0)))
    (say "call 2 cache-hit " (number->string (car second)) " seconds " (number->string (cadr second))))
  (let ((top (car (gimp-image-get-active-layer image))))
    (say "active layer " (car (gimp-item-get-name top)) " mask " (number->string (car (gimp-layer-get-mask top))))
    ; A fill started on a fill layer edits its source: the cached template again.
    (say "call 3 cache-hit " (number->string (car (plug-in-flashps-generative-fill RUN-NONINTERACTIVE image top "" 3 2 1.0))))
    (say "layers " (number->string (car (gimp-image-get-layers image)))))
  (let ((flat (car (gimp-image-flatten image))))
    (gimp-file-save RUN-NONINTERACTIVE image flat "after.png" "after.png"))
  (gimp-image-delete image))
SCHEME
cat > empty.scm <<'SCHEME'
(let* ((image (car (gimp-file-load RUN-NONINTERACTIVE "in.jpg" "in.jpg"))))
  (gimp-selection-none image)
  (plug-in-flashps-generative-fill RUN-NONINTERACTIVE image (car (gimp-image-get-active-layer image)) "" 1 2 1.0))
SCHEME
cat > grey.scm <<'SCHEME'
(let* ((image (car (gimp-file-load RUN-NONINTERACTIVE "in.jpg" "in.jpg"))))
  (gimp-image-convert-grayscale image)
  (gimp-image-select-rectangle image CHANNEL-OP-REPLACE 0 0 64 64)
  (plug-in-flashps-generative-fill RUN-NONINTERACTIVE image (car (gimp-image-get-active-layer image)) "" 1 2 1.0))
SCHEME

# Batch mode prints gimp-message and errors on stderr; -i: no display needed.
timeout -k 10 900 gimp-console-2.10 -i -d -f -b "$(cat fill.scm)" -b "$(cat empty.scm)" -b "$(cat grey.scm)" \
  -b "(gimp-quit 0)" > gimp.log 2>&1 || fail "gimp-console-2.10 exited with status $?"
grep 'flashps-test:' gimp.log | sed 's/^.*flashps-test: /  /'

grep -q 'flashps-test: call 1 cache-hit 0 ' gimp.log || fail "the first fill should capture the template (cache-hit 0)"
grep -q 'flashps-test: call 2 cache-hit 1 ' gimp.log || fail "the second fill should replay the template (cache-hit 1)"
grep -q 'flashps-test: call 3 cache-hit 1' gimp.log || fail "a fill of a fill layer should replay its source's template"
grep -q 'flashps-test: active layer FlashPS fill (seed 2) mask [1-9]' gimp.log ||
  fail "a fill should add a layer named 'FlashPS fill (seed 2)' with a layer mask, and make it active"
grep -q 'flashps-test: layers 4' gimp.log || fail "three fills should add three layers"
grep -q 'FlashPS Generative Fill: select the region to fill first' gimp.log ||
  fail "a fill without a selection should say to select first"
grep -q 'convert this one first (Image ▸ Mode ▸ RGB)' gimp.log || fail "a grey image should be refused with a hint"

# Pixels: inside the selection (shrunk by 4 px) most changed; outside it (grown by 4 px) none
# did (1 level of tolerance for compositing's rounding).
counts=($("$work/image_region_diff" before.png after.png "${rect[@]}" 4 1)) # inside N of, outside N of
inside_changed=${counts[1]} inside_total=${counts[2]} outside_changed=${counts[4]}
echo "  changed pixels: inside $inside_changed of $inside_total, outside $outside_changed"
(( outside_changed == 0 )) || fail "$outside_changed pixels outside the selection changed"
(( inside_changed * 2 > inside_total )) || fail "only $inside_changed of $inside_total pixels inside the selection changed"

# The plug-in captured into the store the CLI uses (FLASHPS_CACHE_DIR): one template.
flashps="$build/cli/flashps"
[[ -n "$build" ]] || flashps="$(command -v flashps)" || fail "installed: no flashps on PATH"
if [[ -x "$flashps" ]]; then
  "$flashps" cache ls | tee cache.txt | sed 's/^/  /'
  grep -q '^1 capture' cache.txt || fail "the store should hold one capture"
fi
echo "PASS: GIMP plug-in"
