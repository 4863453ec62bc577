#!/usr/bin/env bash
# Installs the FlashPS Generative Fill plug-in into GIMP 2.10 (Filters ▸ FlashPS ▸ Generative Fill…)
# by symlinking the built or installed binary into the user's plug-in folder. The link keeps the
# binary where it was built/installed, so its RPATH ($ORIGIN/...) still finds libflashps.
#
#   scripts/integrate-gimp.sh [PATH/TO/flashps-generative-fill]   install (or replace) the link
#   scripts/integrate-gimp.sh --uninstall                          remove it
#
# GIMP2_DIRECTORY (GIMP's own variable) picks another GIMP profile than ~/.config/GIMP/2.10.
set -euo pipefail

name=flashps-generative-fill
repo="$(cd "$(dirname "$0")/.." && pwd)"
profile="${GIMP2_DIRECTORY:-$HOME/.config/GIMP/2.10}"
# A folder of the plug-in's name: GIMP 2.10 accepts it, GIMP 3 requires it.
target_dir="$profile/plug-ins/$name"
target="$target_dir/$name"

if [[ "${1:-}" == "--uninstall" ]]; then
  if [[ -L "$target" || -e "$target" ]]; then
    rm -f "$target"
    rmdir "$target_dir" 2>/dev/null || true
    echo "Removed $target"
  else
    echo "Nothing to remove: $target does not exist"
  fi
  exit 0
fi
if [[ "${1:-}" == -* ]]; then
  echo "usage: $0 [PATH/TO/$name | --uninstall]" >&2
  exit 2
fi

binary="${1:-}"
if [[ -z "$binary" ]]; then
  # (The gimp-plugin-flashps package installs it in GIMP's system folder: nothing to link then.)
  for candidate in "$repo/build/lib/flashps/gimp/$name" /usr/local/lib/gimp/2.0/plug-ins/$name/$name; do
    if [[ -x "$candidate" ]]; then binary="$candidate"; break; fi
  done
fi
if [[ -z "$binary" || ! -x "$binary" || -d "$binary" ]]; then
  echo "error: no $name binary found${binary:+ at $binary}." >&2
  echo "Build it (needs libgimp2.0-dev; cmake finds gimp-2.0 through pkg-config), or pass its path." >&2
  exit 1
fi
binary="$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")"

mkdir -p "$target_dir"
ln -sfn "$binary" "$target"
echo "Linked $target -> $binary"
echo "Restart GIMP, then use Filters > FlashPS > Generative Fill... on a selection."
