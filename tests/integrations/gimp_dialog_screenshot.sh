#!/usr/bin/env bash
# A screenshot of the plug-in's dialog, with no screenshot tool: GIMP runs the procedure
# interactively on an Xvfb display whose framebuffer (-fbdir) is an XWD file, then GIMP itself
# converts that file to PNG and crops the black screen around the dialog.
#
#   tests/integrations/gimp_dialog_screenshot.sh FLASHPS_BUILD_DIR OUT.png
# Exit 77 without GIMP, Xvfb or the plug-in (FLASHPS_GIMP_PLUGIN as in gimp_test.sh).
set -euo pipefail

build="$(cd "${1:?usage: $0 FLASHPS_BUILD_DIR OUT.png}" && pwd)"
out="$(realpath -m "${2:?usage: $0 FLASHPS_BUILD_DIR OUT.png}")"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
plugin="${FLASHPS_GIMP_PLUGIN:-$build/lib/flashps/gimp/flashps-generative-fill}"
for tool in gimp-console-2.10 Xvfb; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
[[ -x "$plugin" ]] || { echo "SKIP: $plugin was not built"; exit 77; }

work="$(mktemp -d)"
xvfb="" gimp=""
cleanup() {
  # GIMP waiting on a plug-in ignores SIGTERM: the plug-in first, then GIMP for good.
  [[ -n "${dialog:-}" ]] && kill "$dialog" 2>/dev/null
  [[ -n "$gimp" ]] && { sleep 1; kill -KILL "$gimp" 2>/dev/null; }
  [[ -n "$xvfb" ]] && kill "$xvfb" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" FLASHPS_CACHE_DIR="$work/store"
unset GIMP2_DIRECTORY
mkdir -p "$XDG_CONFIG_HOME/GIMP/2.10/gradients" "$work/fb"
"$repo/scripts/integrate-gimp.sh" "$plugin" >/dev/null
cp "$repo/samples/images/fig.jpg" "$work/in.jpg"
cd "$work"

# -displayfd: Xvfb picks a free display and writes its number.
Xvfb -displayfd 5 -screen 0 800x600x24 -fbdir "$work/fb" -nolisten tcp 5>display 2>xvfb.log &
xvfb=$!
for _ in $(seq 50); do [[ -s display ]] && break; sleep 0.2; done
[[ -s display ]] || { echo "FAIL: Xvfb did not start" >&2; cat xvfb.log >&2; exit 1; }

DISPLAY=":$(cat display)" gimp-console-2.10 -i -d -f -b '
(let* ((image (car (gimp-file-load RUN-NONINTERACTIVE "in.jpg" "in.jpg"))))
  (gimp-image-select-rectangle image CHANNEL-OP-REPLACE 160 192 160 128)
  (plug-in-flashps-generative-fill RUN-INTERACTIVE image
    (car (gimp-image-get-active-layer image)) "" 7 0 1.0))' -b '(gimp-quit 0)' >gimp.log 2>&1 &
gimp=$!
# The dialog is up once the plug-in runs (it waits there); give GTK a moment to draw.
dialog=""
for _ in $(seq 120); do
  dialog="$(pgrep -P "$gimp" -f "flashps-generative-fill .*-run " || true)" # not the -query run
  [[ -n "$dialog" ]] && break
  sleep 0.5
done
[[ -n "$dialog" ]] || { echo "FAIL: the plug-in did not start" >&2; cat gimp.log >&2; exit 1; }
sleep 4
cp fb/Xvfb_screen0 screen.xwd
kill "$dialog"  # as closing the dialog would; GIMP reports the call failed and quits
dialog=""
wait "$gimp" || true
gimp=""

gimp-console-2.10 -i -d -f -b '
(let* ((image (car (file-xwd-load RUN-NONINTERACTIVE "screen.xwd" "screen.xwd")))
       (layer (car (gimp-image-get-active-layer image))))
  (plug-in-autocrop RUN-NONINTERACTIVE image layer)
  (gimp-file-save RUN-NONINTERACTIVE image layer "dialog.png" "dialog.png"))' -b '(gimp-quit 0)' \
  >convert.log 2>&1
[[ -s dialog.png ]] || { echo "FAIL: no screenshot" >&2; cat convert.log >&2; exit 1; }
cp dialog.png "$out"
echo "Wrote $out"
