#!/usr/bin/env bash
# Copies a trained model folder (flashps-train's <out>/model) into samples/models/flashps-fill-small,
# keeping its MODEL_CARD.md, and records the files' checksums in SHA256SUMS (checked by ctest
# model.bundled_checksums).
set -euo pipefail
source_dir=${1:?usage: ship-model.sh TRAIN_OUT_DIR/model}
cd "$(dirname "$0")/../.."
target=samples/models/flashps-fill-small
mkdir -p "$target"
find "$target" -mindepth 1 ! -name MODEL_CARD.md -delete
cp -r "$source_dir"/. "$target"/
(cd "$target" && find . -type f ! -name MODEL_CARD.md ! -name SHA256SUMS | sort | xargs sha256sum > SHA256SUMS)
du -sh "$target"
cat "$target/SHA256SUMS"
