#!/usr/bin/env bash
# Installs every Debian package FlashPS needs to build, test and run. Idempotent: safe to re-run.
# Knows Debian 12 (bookworm: LibTorch 1.13, Catch2 v2) and Debian 13 (trixie: LibTorch 2.6,
# Catch2 v3); scripts/check-debian13.sh runs it in a Debian 13 root.
#
#   FLASHPS_WITH_CUDA=1 scripts/install-deps.sh   # Debian 13 only: LibTorch 2.6 built with CUDA
#                                                 # (contrib, its CUDA 12 libraries from non-free)
#                                                 # and the CUDA toolkit, instead of the CPU build
set -euo pipefail

release=$(. /etc/os-release && echo "${VERSION_CODENAME:-unknown}")
case "$release" in
  bookworm | trixie) ;;
  *) echo "install-deps: Debian $release is not one this script knows (bookworm or trixie); trying the trixie names" >&2
     release=trixie ;;
esac

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libtorch-dev            # LibTorch (Debian 12: 1.13, Debian 13: 2.6; CPU): the tensor library
  libopenblas0-openmp     # fast BLAS for LibTorch; without it the reference BLAS is ~15x slower
  libsqlite3-dev          # activation store index
  libxxhash-dev           # checksums of stored activations
  nlohmann-json3-dev      # config.json, cases.json, manifests
  libcli11-dev            # the flashps CLI
  libcpp-httplib-dev      # bench http and the HTTP tests: an HTTP/1.1 client (the server's transport is ours)
  curl                    # tests/http: a real HTTP client against flashps serve
  sqlite3                 # tests/cli: inspects and damages the store's index like an outside tool
  libcurl4-openssl-dev    # bench http: times the server through libcurl (what curl is) beside httplib
  catch2                  # tests (Debian 12: v2, Debian 13: v3)
  libpng-dev libjpeg-dev  # image IO
  qt6-base-dev            # desktop app
  libdnnl-dev             # oneDNN sgemm: ~6x faster fp32 linear layers than OpenBLAS here
  libicu-dev              # Unicode classes, case mapping, normalisation (CLIP tokenizer)
  libsentencepiece-dev    # tests only: the reference the T5 tokenizer is checked against (see tests/t5_tokenizer)
  clang                   # libFuzzer targets for the untrusted-file parsers (runtime below)
  libopencv-photo-dev libopencv-imgproc-dev libopencv-core-dev  # Telea baseline of bench quality
  # The bridges into creative tools, and the applications their tests run headless (~150 MB):
  krita python3-pyqt5     # plugins/krita: Krita 5 and the PyQt5 its Python plugins need (a Recommends)
  xvfb xauth              # a virtual display for Krita (and screenshots)
)
if [ "$release" = bookworm ]; then
  packages+=(
    libclang-rt-14-dev    # clang 14's libFuzzer and sanitizer runtimes
    libgimp2.0-dev gimp   # plugins/gimp: the GIMP 2.10 plug-in (libgimp, GTK 2) and GIMP itself
  )
else
  # Debian 13 ships GIMP 3, whose plug-in API replaced 2.10's: plugins/gimp is not built there,
  # plugins/gimp3 is (libgimp 3, GTK 3), and its test runs gimp-console-3.0's Script-Fu batch.
  packages+=(
    libclang-rt-dev
    libgimp-3.0-dev gimp  # plugins/gimp3: the GIMP 3 plug-in (libgimp 3, GTK 3) and GIMP 3 itself
  )
fi
if [ "${FLASHPS_WITH_CUDA:-0}" = 1 ]; then
  if [ "$release" = bookworm ]; then
    echo "install-deps: FLASHPS_WITH_CUDA=1 needs Debian 13 (Debian 12 has no CUDA build of LibTorch)" >&2
    exit 1
  fi
  # libtorch-cuda-dev replaces libtorch-dev (same headers); apt needs contrib and non-free.
  packages=("${packages[@]/libtorch-dev/libtorch-cuda-dev}")
  packages+=(nvidia-cuda-toolkit)
fi

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
