#!/usr/bin/env bash
# The README's first command: installs the Debian packages, builds only what an edit needs (the
# library and the `flashps` CLI; scripts/test.sh builds the rest), and edits a sample photo with
# the bundled model. Output: out/fig.png
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
FLASHPS_TARGETS=flashps_cli scripts/build.sh
mkdir -p out
./build/cli/flashps edit --image samples/images/fig.jpg --mask samples/masks/fig.png \
  --seed 1 --out out/fig.png
