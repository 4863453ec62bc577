#!/usr/bin/env bash
# Installs the Debian wallpaper packages the bundled model is trained on and links their photos
# into one folder (default: ~/.cache/flashps/training-photos), leaving out the four photos that
# samples/ uses, so the sample edits are on images the model never saw. Writes MANIFEST.tsv with
# package, version and file of every photo. Idempotent.
set -euo pipefail
out=${1:-$HOME/.cache/flashps/training-photos}
packages=(lomiri-wallpapers lomiri-wallpapers-16.04 lomiri-wallpapers-20.04 mate-backgrounds ukui-wallpapers)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd=sudo
  $sudo_cmd apt-get install -y --no-install-recommends "${missing[@]}"
fi
excluded="Picture_0B_by_freespace.jpg picosdeeuropa_by_Aitzol_Berasategi.jpg aitzgorri_by_Aitzol_Berasategi.jpg seeding_by_Clements_Engelhardt.jpg"
rm -rf "$out"
mkdir -p "$out"
printf 'package\tversion\tfile\n' > "$out/MANIFEST.tsv"
for package in "${packages[@]}"; do
  version=$(dpkg-query -W -f='${Version}' "$package")
  dpkg -L "$package" | grep -iE '\.(jpe?g|png)$' | sort | while read -r file; do
    name=$(basename "$file")
    case " $excluded " in *" $name "*) continue ;; esac
    [ -f "$file" ] || continue
    ln -sf "$file" "$out/${package}__${name}"
    printf '%s\t%s\t%s\n' "$package" "$version" "$file" >> "$out/MANIFEST.tsv"
  done
done
echo "$(($(wc -l < "$out/MANIFEST.tsv") - 1)) photos linked in $out"
