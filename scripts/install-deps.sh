#!/usr/bin/env bash
# Installs every Debian package FlashPS needs to build, test and run. Idempotent: safe to re-run.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libtorch-dev            # LibTorch 1.13 (CPU): the tensor library
  libopenblas0-openmp     # fast BLAS for LibTorch; without it the reference BLAS is ~15x slower
  libsqlite3-dev          # activation store index
  libxxhash-dev           # checksums of stored activations
  nlohmann-json3-dev      # config.json, cases.json, manifests
  libcli11-dev            # the flashps CLI
  libcpp-httplib-dev      # flashps serve: a maintained HTTP/1.1 server (multipart, chunked streams)
  curl                    # tests/http: a real HTTP client against flashps serve
  libcurl4-openssl-dev    # bench http: times the server through libcurl (what curl is) beside httplib
  catch2                  # tests (v2)
  libpng-dev libjpeg-dev  # image IO
  qt6-base-dev            # desktop app
  libdnnl-dev             # oneDNN sgemm: ~6x faster fp32 linear layers than OpenBLAS here
  libicu-dev              # Unicode classes, case mapping, normalisation (CLIP tokenizer)
  libsentencepiece-dev    # tests only: the reference the T5 tokenizer is checked against (see tests/t5_tokenizer)
  clang libclang-rt-14-dev  # libFuzzer targets for the untrusted-file parsers
  libopencv-photo-dev libopencv-imgproc-dev libopencv-core-dev  # Telea baseline of bench quality
  # The bridges into creative tools, and the applications their tests run headless (~150 MB):
  libgimp2.0-dev gimp     # plugins/gimp: the GIMP 2.10 plug-in (libgimp, GTK 2) and GIMP itself
  krita python3-pyqt5     # plugins/krita: Krita 5 and the PyQt5 its Python plugins need (a Recommends)
  xvfb xauth              # a virtual display for Krita (and screenshots)
)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done

# tests/clients runs the official OpenAI Node library against flashps serve. Node may come from
# elsewhere (NodeSource bundles npm in its nodejs package): install Debian's only when the commands
# are missing.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
echo "install-deps: installing ${missing[*]}"
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
