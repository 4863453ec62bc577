#!/usr/bin/env bash
# Installs the FlashPS Krita plugin (plugins/krita) for the current user and enables it.
#   scripts/integrate-krita.sh              copy it into Krita's pykrita folder, enable it in kritarc
#   scripts/integrate-krita.sh --symlink    the same with symlinks (edits in the checkout take effect)
#   scripts/integrate-krita.sh --uninstall  remove it and disable it
#   scripts/integrate-krita.sh --zip OUT.zip  a zip for Tools ▸ Scripts ▸ Import Python Plugin from File
# Linux paths: ${XDG_DATA_HOME:-~/.local/share}/krita/pykrita and ${XDG_CONFIG_HOME:-~/.config}/kritarc.
set -euo pipefail

source_dir=$(cd "$(dirname "$0")/../plugins/krita" && pwd)
name=flashps_krita
pykrita=${XDG_DATA_HOME:-$HOME/.local/share}/krita/pykrita
kritarc=${XDG_CONFIG_HOME:-$HOME/.config}/kritarc

# set_enabled true|false: [python] enable_flashps_krita=VALUE in kritarc, other lines untouched.
set_enabled() {
  mkdir -p "$(dirname "$kritarc")"
  touch "$kritarc"
  local tmp
  tmp=$(mktemp)
  awk -v key="enable_$name" -v value="$1" '
    /^\[/ { if (in_python && !done) { print key "=" value; done = 1 } in_python = ($0 == "[python]") }
    in_python && index($0, key "=") == 1 { if (!done) print key "=" value; done = 1; next }
    { print }
    END { if (!done) { if (!in_python) print "\n[python]"; print key "=" value } }' "$kritarc" >"$tmp"
  cat "$tmp" >"$kritarc"
  rm -f "$tmp"
  echo "kritarc: [python] enable_$name=$1 in $kritarc"
}

make_zip() {
  local out=$1
  [[ $out = /* ]] || out=$PWD/$out
  # Krita's importer reads *.desktop files and the module folders they name (with __init__.py).
  (cd "$source_dir" && python3 - "$out" "$name" <<'PY'
import os, sys, zipfile
out, name = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
    archive.write(name + ".desktop")
    for folder, dirs, files in os.walk(name):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        archive.write(folder)  # the importer wants the folder's own entry ("flashps_krita/")
        for file in sorted(files):
            if not file.endswith(".pyc"):
                archive.write(os.path.join(folder, file))
PY
  )
  echo "zip: $out (import it with Tools ▸ Scripts ▸ Import Python Plugin from File, then restart Krita)"
}

mode=copy
case ${1:-} in
  "") ;;
  --symlink) mode=symlink ;;
  --uninstall) mode=uninstall ;;
  --zip)
    [ $# -eq 2 ] || { echo "usage: $0 --zip OUT.zip" >&2; exit 2; }
    make_zip "$2"
    exit 0
    ;;
  -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
  *) echo "usage: $0 [--symlink | --uninstall | --zip OUT.zip]" >&2; exit 2 ;;
esac

if [ "$mode" = uninstall ]; then
  rm -rf "${pykrita:?}/$name" "$pykrita/$name.desktop"
  echo "removed: $pykrita/$name and $pykrita/$name.desktop"
  [ -f "$kritarc" ] && set_enabled false
  echo "FlashPS is uninstalled (restart Krita)."
  exit 0
fi

mkdir -p "$pykrita"
rm -rf "${pykrita:?}/$name" "$pykrita/$name.desktop"
if [ "$mode" = symlink ]; then
  ln -s "$source_dir/$name" "$pykrita/$name"
  ln -s "$source_dir/$name.desktop" "$pykrita/$name.desktop"
  echo "linked: $pykrita/$name -> $source_dir/$name (and $name.desktop)"
else
  cp -R "$source_dir/$name" "$pykrita/$name"
  rm -rf "$pykrita/$name/__pycache__"
  cp "$source_dir/$name.desktop" "$pykrita/$name.desktop"
  echo "copied: $source_dir/$name and $name.desktop to $pykrita/"
fi
set_enabled true
echo "FlashPS is installed: restart Krita, then Settings ▸ Dockers ▸ FlashPS (start the server with \`flashps serve\`)."
