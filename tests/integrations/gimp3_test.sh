#!/usr/bin/env bash
# The GIMP 3 plug-in in the real GIMP 3, headless: gimp-console-3.0 with the Script-Fu batch
# interpreter, a fresh GIMP profile whose plug-ins folder links the plug-in's folder, an empty
# activation store. Fills a rectangular selection of a sample photo with the bundled model twice
# (seed 1, then 2) and checks: the first fill captures the template (cache-hit 0), the second
# replays it (1); each fill is a new layer above the photo with a layer mask, and that mask is the
# selection (its extent, and the share of the image it covers); the photo layer is untouched; the
# exported composite changed inside the selection and nowhere else; refused calls say why.
#
#   tests/integrations/gimp3_test.sh FLASHPS_BUILD_DIR
# Exit 77 (skipped) without GIMP 3 or without the plug-in built. FLASHPS_GIMP3_PLUGIN_DIR names
# another plug-in folder than FLASHPS_BUILD_DIR/lib/gimp/3.0/plug-ins/flashps-gimp3 (an installed
# package's, /usr/lib/x86_64-linux-gnu/gimp/3.0/plug-ins/flashps-gimp3).
set -euo pipefail

build="$(cd "${1:?usage: $0 FLASHPS_BUILD_DIR}" && pwd)"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
plugin_dir="${FLASHPS_GIMP3_PLUGIN_DIR:-$build/lib/gimp/3.0/plug-ins/flashps-gimp3}"

if ! command -v gimp-console-3.0 >/dev/null; then
  echo "SKIP: GIMP 3 is not installed (needs gimp-console-3.0; Debian 13: apt install gimp)"
  exit 77
fi
if [[ ! -x "$plugin_dir/flashps-gimp3" ]]; then
  echo "SKIP: $plugin_dir/flashps-gimp3 was not built (configure with libgimp-3.0-dev installed)"
  exit 77
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; echo "--- GIMP's output:" >&2; cat "$work/gimp.log" >&2 2>/dev/null || true; exit 1; }

# A fresh GIMP profile and an empty activation store, both thrown away at the end. GIMP 3 loads a
# plug-in from a folder named as its executable: the profile's plug-ins folder links that folder.
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" FLASHPS_CACHE_DIR="$work/store"
export GIMP3_DIRECTORY="$work/profile"
mkdir -p "$GIMP3_DIRECTORY/plug-ins"
ln -s "$plugin_dir" "$GIMP3_DIRECTORY/plug-ins/flashps-gimp3"

"${CC:-cc}" -O2 -o "$work/image_region_diff" "$repo/tests/integrations/image_region_diff.c" \
  -I "$repo/sdk/include" -L "$build/sdk" -lflashps -Wl,-rpath,"$build/sdk"
cp "$repo/samples/images/fig.jpg" "$work/in.jpg"
cd "$work"

# The selection: x y width height (in the 512x512 photo).
rect=(160 192 160 128)
# GIMP 3's Script-Fu calls a plug-in procedure with named arguments.
fill_call() { # IMAGE DRAWABLES PROMPT SEED
  echo "(plug-in-flashps-generative-fill #:run-mode RUN-NONINTERACTIVE #:image $1 #:drawables $2 #:prompt \"$3\" #:seed $4 #:steps 2 #:strength 1.0)"
}
cat > fill.scm <<SCHEME
(define (say . parts) (gimp-message (apply string-append "flashps-test: " parts)))
(define (n x) (number->string x))
(define (layers-of image) (car (gimp-image-get-layers image)))
(define (position image item) (n (car (gimp-image-get-item-position image item))))
(let* ((image (car (gimp-file-load RUN-NONINTERACTIVE "in.jpg")))
       (photo (vector-ref (layers-of image) 0)))
  (gimp-file-save RUN-NONINTERACTIVE image "before.png" -1)
  (gimp-image-select-rectangle image CHANNEL-OP-REPLACE ${rect[*]})
  (let ((first $(fill_call image "(vector photo)" "a fig" 1)))
    (say "call 1 cache-hit " (n (car first)) " seconds " (n (cadr first))))
  (let ((second $(fill_call image "(vector photo)" "a fig" 2)))
    (say "call 2 cache-hit " (n (car second)) " seconds " (n (cadr second))))
  ; The plug-in selects the layer it added.
  (let* ((fill (vector-ref (car (gimp-image-get-selected-layers image)) 0))
         (mask (car (gimp-layer-get-mask fill))))
    (say "layers " (n (vector-length (layers-of image))))
    (say "selected " (car (gimp-item-get-name fill)) " at " (position image fill)
         ", photo at " (position image photo))
    (say "photo mask " (n (car (gimp-layer-get-mask photo))))
    (say "fill mask " (if (> mask 0) "yes" "no"))
    (gimp-selection-none image)
    (gimp-file-save RUN-NONINTERACTIVE image "after.png" -1)
    (if (> mask 0)
        (begin
          ; The share of the whole layer the mask selects (values >= 0.5), then its extent.
          (say "mask covers " (n (list-ref (gimp-drawable-histogram mask HISTOGRAM-VALUE 0.5 1.0) 5)))
          (gimp-image-select-item image CHANNEL-OP-REPLACE mask)
          (let ((bounds (gimp-selection-bounds image)))
            (say "mask bounds " (n (list-ref bounds 1)) " " (n (list-ref bounds 2)) " "
                 (n (list-ref bounds 3)) " " (n (list-ref bounds 4))))))
    ; A fill started on a fill layer edits its source: the cached template again.
    (gimp-image-select-rectangle image CHANNEL-OP-REPLACE ${rect[*]})
    (say "call 3 cache-hit " (n (car $(fill_call image "(vector fill)" "" 3)))))
  ; The photo alone, every fill layer hidden: the plug-in never paints on the source layer.
  (let ((layers (layers-of image)))
    (let loop ((i 0))
      (if (< i (vector-length layers))
          (begin
            (if (not (= (vector-ref layers i) photo)) (gimp-item-set-visible (vector-ref layers i) FALSE))
            (loop (+ i 1))))))
  (gimp-file-save RUN-NONINTERACTIVE image "photo.png" -1)
  (gimp-image-delete image))
SCHEME
cat > empty.scm <<SCHEME
(let* ((image (car (gimp-file-load RUN-NONINTERACTIVE "in.jpg"))))
  (gimp-selection-none image)
  $(fill_call image "(car (gimp-image-get-layers image))" "" 1))
SCHEME
cat > grey.scm <<SCHEME
(let* ((image (car (gimp-file-load RUN-NONINTERACTIVE "in.jpg"))))
  (gimp-image-convert-grayscale image)
  (gimp-image-select-rectangle image CHANNEL-OP-REPLACE 0 0 64 64)
  $(fill_call image "(car (gimp-image-get-layers image))" "" 1))
SCHEME

# Batch mode prints gimp-message and errors on stderr; -i: no display needed. GIMP 3 stops at a
# failing batch command (and, without --quit, then waits): one GIMP per script, each quitting.
batch() { # SCRIPT LOG
  timeout -k 10 900 gimp-console-3.0 -i -d -f --quit --batch-interpreter=plug-in-script-fu-eval \
    -b "$(cat "$1")" > "$2" 2>&1
}
batch fill.scm gimp.log || fail "gimp-console-3.0 exited with status $? on the fills"
grep 'flashps-test:' gimp.log | sed 's/^.*flashps-test: /  /'
# The refusals must fail the call, with a message that says why.
if batch empty.scm empty.log; then fail "a fill without a selection should fail"; fi
if batch grey.scm grey.log; then fail "a fill of a grey image should fail"; fi

grep -q 'flashps-test: call 1 cache-hit 0 ' gimp.log || fail "the first fill should capture the template (cache-hit 0)"
grep -q 'flashps-test: call 2 cache-hit 1 ' gimp.log || fail "the second fill should replay the template (cache-hit 1)"
grep -q 'flashps-test: layers 3$' gimp.log || fail "two fills should add two layers to the photo"
grep -q 'flashps-test: selected FlashPS fill (seed 2) at 1, photo at 2$' gimp.log ||
  fail "the second fill should be a layer 'FlashPS fill (seed 2)' right above the photo, selected"
grep -q 'flashps-test: photo mask -1' gimp.log || fail "the photo layer should get no mask"
grep -q 'flashps-test: fill mask yes' gimp.log || fail "the fill layer should have a layer mask"
# The mask is the selection: its extent is the rectangle, and it selects the rectangle's share
# of the 512x512 layer (160x128 = 0.078125; a little more or less for an antialiased edge).
grep -q "flashps-test: mask bounds ${rect[0]} ${rect[1]} $((rect[0] + rect[2])) $((rect[1] + rect[3]))\$" gimp.log ||
  fail "the layer mask's extent should be the selection's, ${rect[*]}"
covers=$(sed -n 's/^.*flashps-test: mask covers //p' gimp.log)
awk -v c="$covers" 'BEGIN { exit !(c > 0.0775 && c < 0.0788) }' ||
  fail "the layer mask should select 0.078125 of the layer (the selection), not ${covers:-nothing}"
grep -q 'flashps-test: call 3 cache-hit 1' gimp.log || fail "a fill of a fill layer should replay its source's template"
grep -q 'FlashPS Generative Fill: select the region to fill first' empty.log ||
  { cat empty.log >&2; fail "a fill without a selection should say to select first"; }
grep -q 'works on RGB images: convert this one first' grey.log ||
  { cat grey.log >&2; fail "a grey image should be refused with a hint"; }

# Pixels of the exported composite: inside the selection (shrunk by 4 px) most changed; outside
# it (grown by 4 px) none did (1 level of tolerance for compositing's rounding).
counts=($("$work/image_region_diff" before.png after.png "${rect[@]}" 4 1)) # inside N of, outside N of
inside_changed=${counts[1]} inside_total=${counts[2]} outside_changed=${counts[4]}
echo "  composite: changed pixels inside $inside_changed of $inside_total, outside $outside_changed"
(( outside_changed == 0 )) || fail "$outside_changed pixels outside the selection changed"
(( inside_changed * 2 > inside_total )) || fail "only $inside_changed of $inside_total pixels inside the selection changed"
# The photo layer alone: nothing changed anywhere (non-destructive).
counts=($("$work/image_region_diff" before.png photo.png "${rect[@]}" 0 0))
echo "  photo layer: changed pixels inside ${counts[1]}, outside ${counts[4]}"
(( counts[1] == 0 && counts[4] == 0 )) || fail "the photo layer itself changed"

# The plug-in captured into the store the CLI uses (FLASHPS_CACHE_DIR): one template.
if [[ -x "$build/cli/flashps" ]]; then
  "$build/cli/flashps" cache ls | tee cache.txt | sed 's/^/  /'
  grep -q '^1 capture' cache.txt || fail "the store should hold one capture"
fi
echo "PASS: GIMP 3 plug-in"
